package structq

// aggregator computes one aggregate over the values it is given.
type aggregator struct {
	op    string
	n     int
	sum   decimalSum
	best  sortKey
	seen  map[string]struct{}
	found bool
}

func newAggregator(op string) *aggregator {
	a := &aggregator{op: op}
	if op == "distinct" {
		a.seen = map[string]struct{}{}
	}
	return a
}

// add counts a row whose field holds v (missing: nil).
func (a *aggregator) add(v any) {
	a.n++
	switch a.op {
	case "sum", "avg":
		if n, ok := toNumber(v); ok {
			a.sum.add(n)
		}
	case "min", "max":
		if v == nil {
			return
		}
		k := keyOf(v)
		c := 0
		if a.found {
			c = k.cmp(a.best)
		}
		if !a.found || (a.op == "min" && c < 0) || (a.op == "max" && c > 0) {
			a.best, a.found = k, true
		}
	case "distinct":
		if v != nil {
			a.seen[key(v)] = struct{}{}
		}
	}
}

// value is the aggregate: count the rows, sum and avg their numbers
// (null when none is), min and max their values as they are (null when
// all are missing), distinct the number of different values.
func (a *aggregator) value() any {
	switch a.op {
	case "count":
		return a.n
	case "sum":
		return a.sum.value()
	case "avg":
		return a.sum.avg()
	case "distinct":
		return len(a.seen)
	}
	return a.best.v
}

// empty reports whether the aggregate found nothing to aggregate: no
// number for sum and avg, no value for min, max and distinct.
func (a *aggregator) empty() bool {
	switch a.op {
	case "sum", "avg":
		return a.sum.n == 0
	case "min", "max":
		return !a.found
	case "distinct":
		return len(a.seen) == 0
	}
	return false
}
