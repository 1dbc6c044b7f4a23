package structqtest

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
)

// Sizes of the data: each result is far over the default threshold, so
// that it is offloaded.
const (
	NumOrders   = 3000
	NumEntities = 300
	NumEvents   = 2400
	NumLines    = 3000
)

// Tools are the servers' tools and the text each returns: rows of an
// orders table (server-postgres), a knowledge graph (the memory server's
// read_graph), log events.
func Tools() map[string]string {
	es, rs := Graph(NumEntities)
	return map[string]string{
		"query":       OrdersJSON(Orders(NumOrders)),
		"read_graph":  GraphJSON(es, rs),
		"search_logs": EventsJSON(Events(NumEvents)),
		"tail_log":    strings.Join(LogLines(NumLines), "\n") + "\n",
	}
}

// Case is a question and its answer, computed in plain Go over the data.
type Case struct {
	Name string
	Tool string // whose result the question reads
	// Section is the field of the result whose file the question reads:
	// "" for a result that is the records.
	Section string
	Args    map[string]any
	// Want is the first line of the answer, as JSON encodes it; WantErr,
	// for a malformed question, what the tool error says.
	Want    any
	WantErr string
}

// cents prints an exact sum of cents with two decimals.
func cents(c int64) Decimal { return Decimal(fmt.Sprintf("%d.%02d", c/100, c%100)) }

// Decimal is a JSON number written as it is (json.Number, for the
// comparison).
type Decimal string

// MarshalJSON writes the number as it is.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d), nil }

func cond(field, op string, value any) map[string]any {
	return map[string]any{"field": field, "op": op, "value": value}
}

func where(cs ...map[string]any) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

// group is an expected group of a group_by answer.
type group struct {
	Key   any `json:"key"`
	Value any `json:"value"`
	Count int `json:"count"`
}

// topGroups sorts groups by value (given as a comparable int64) descending,
// then key, and keeps the first n (all when n is 0).
func topGroups(gs []group, vals map[string]int64, n int) []group {
	slices.SortStableFunc(gs, func(a, b group) int {
		va, vb := vals[a.Key.(string)], vals[b.Key.(string)]
		if va != vb {
			if va > vb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key.(string), b.Key.(string))
	})
	if n > 0 && len(gs) > n {
		gs = gs[:n]
	}
	return gs
}

func answer(matched int, key string, v any) map[string]any {
	return map[string]any{"matched": matched, key: v}
}

// Cases returns the suite.
func Cases() []Case {
	var cs []Case
	cs = append(cs, orderCases()...)
	cs = append(cs, graphCases()...)
	cs = append(cs, eventCases()...)
	cs = append(cs, lineCases()...)
	return append(cs, malformed()...)
}

func orderCases() []Case {
	orders := Orders(NumOrders)
	var over999, paid, refunded int
	var paidCents, refundedCents int64
	var maxOrder Order
	bySum, byCount := map[string]int64{}, map[string]int{}
	var expedite []map[string]any
	refundedCustomers := map[string]bool{}
	for _, o := range orders {
		if o.Status == "paid" {
			paid++
			paidCents += o.Cents
			bySum[o.Customer] += o.Cents
			byCount[o.Customer]++
			if o.Cents > 99900 {
				over999++
			}
		}
		if o.Status == "refunded" {
			refunded++
			refundedCents += o.Cents
			refundedCustomers[o.Customer] = true
		}
		if o.Cents > maxOrder.Cents {
			maxOrder = o
		}
		if strings.Contains(strings.ToLower(o.Note), "expedite") {
			expedite = append(expedite, map[string]any{"id": o.ID, "customer": o.Customer})
		}
	}
	var top []group
	for c, n := range byCount {
		top = append(top, group{Key: c, Value: cents(bySum[c]), Count: n})
	}
	top = topGroups(top, bySum, 5)
	slices.Reverse(expedite)
	avg, _ := new(big.Rat).SetFrac64(refundedCents, int64(refunded)*100).Float64()
	return []Case{
		{Name: "count of paid orders over 999, amounts as strings", Tool: "query",
			Args: map[string]any{"where": where(cond("status", "eq", "paid"), cond("amount", "gt", 999)), "aggregate": map[string]any{"op": "count"}},
			Want: answer(over999, "value", over999)},
		{Name: "exact sum of paid amounts", Tool: "query",
			Args: map[string]any{"where": where(cond("status", "eq", "paid")), "aggregate": map[string]any{"op": "sum", "field": "amount"}},
			Want: answer(paid, "value", cents(paidCents))},
		{Name: "average refund", Tool: "query",
			Args: map[string]any{"where": where(cond("status", "eq", "refunded")), "aggregate": map[string]any{"op": "avg", "field": "amount"}},
			Want: answer(refunded, "value", avg)},
		{Name: "top 5 customers by the sum of their paid orders", Tool: "query",
			Args: map[string]any{"where": where(cond("status", "eq", "paid")), "group_by": "customer", "aggregate": map[string]any{"op": "sum", "field": "amount"}, "limit": 5},
			Want: answer(paid, "groups", top)},
		{Name: "largest amount, compared as a number", Tool: "query",
			Args: map[string]any{"aggregate": map[string]any{"op": "max", "field": "amount"}},
			Want: answer(len(orders), "value", maxOrder.Amount())},
		{Name: "notes containing expedite, latest ids first", Tool: "query",
			Args: map[string]any{"where": where(cond("note", "contains", "Expedite")), "select": []any{"id", "customer"}, "sort": map[string]any{"field": "id", "desc": true}, "limit": 3},
			Want: answer(len(expedite), "records", expedite[:3])},
		{Name: "distinct customers with a refund", Tool: "query",
			Args: map[string]any{"where": where(cond("status", "eq", "refunded")), "aggregate": map[string]any{"op": "distinct", "field": "customer"}},
			Want: answer(refunded, "value", len(refundedCustomers))},
	}
}

func graphCases() []Case {
	es, rs := Graph(NumEntities)
	kube := 0
	types := map[string]bool{}
	var svc []map[string]any
	re := regexp.MustCompile(`^svc-0[0-4]`)
	for _, e := range es {
		if slices.ContainsFunc(e.Observations, func(o string) bool { return strings.Contains(strings.ToLower(o), "kubernetes") }) {
			kube++
		}
		types[e.EntityType] = true
		if re.MatchString(e.Name) {
			svc = append(svc, map[string]any{"name": e.Name, "entityType": e.EntityType})
		}
	}
	slices.SortFunc(svc, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	counts := map[string]int64{}
	for _, r := range rs {
		counts[r.RelationType]++
	}
	var byType []group
	for k, n := range counts {
		byType = append(byType, group{Key: k, Value: n, Count: int(n)})
	}
	byType = topGroups(byType, counts, 0)
	return []Case{
		{Name: "entities whose observations mention kubernetes", Tool: "read_graph", Section: "entities",
			Args: map[string]any{"where": where(cond("observations", "contains", "KUBERNETES")), "aggregate": map[string]any{"op": "count"}},
			Want: answer(kube, "value", kube)},
		{Name: "entities by a regular expression, by name", Tool: "read_graph", Section: "entities",
			Args: map[string]any{"where": where(cond("name", "matches", "^svc-0[0-4]")), "select": []any{"name", "entityType"}, "sort": map[string]any{"field": "name"}, "limit": 5},
			Want: answer(len(svc), "records", svc[:5])},
		{Name: "distinct entity types", Tool: "read_graph", Section: "entities",
			Args: map[string]any{"aggregate": map[string]any{"op": "distinct", "field": "entityType"}},
			Want: answer(len(es), "value", len(types))},
		{Name: "relations by type", Tool: "read_graph", Section: "relations",
			Args: map[string]any{"group_by": "relationType", "aggregate": map[string]any{"op": "count"}},
			Want: answer(len(rs), "groups", byType)},
	}
}

func eventCases() []Case {
	events := Events(NumEvents)
	roots, matched, fivexx := 0, 0, 0
	latency := new(big.Rat)
	var errs, rootErrors []Event
	rootErrs := 0
	bySvc := map[string]int64{}
	re := regexp.MustCompile(`(?i)timeout|refused`)
	for _, e := range events {
		if e.Parent == "" {
			roots++
		}
		if re.MatchString(e.Msg) {
			matched++
		}
		if e.Status >= 500 {
			fivexx++
			l, _ := new(big.Rat).SetString(e.Latency)
			latency.Add(latency, l)
		}
		if e.Level == "error" {
			errs = append(errs, e)
			if e.Parent == "" {
				rootErrs++
				rootErrors = append([]Event{e}, rootErrors...) // latest first
			}
		}
		if e.Level == "error" || e.Level == "warn" {
			bySvc[e.Service]++
		}
	}
	slices.SortStableFunc(errs, func(a, b Event) int { return strings.Compare(b.TS, a.TS) })
	var latest []map[string]any
	for _, e := range errs[:5] {
		latest = append(latest, map[string]any{"ts": e.TS, "trace.id": e.TraceID})
	}
	avg, _ := latency.Quo(latency, big.NewRat(int64(fivexx), 1)).Float64()
	var svc []group
	n := 0
	for k, c := range bySvc {
		svc = append(svc, group{Key: k, Value: c, Count: int(c)})
		n += int(c)
	}
	svc = topGroups(svc, bySvc, 0)
	return []Case{
		{Name: "root spans: trace.parent exists false", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("trace.parent", "exists", false)), "aggregate": map[string]any{"op": "count"}},
			Want: answer(roots, "value", roots)},
		{Name: "latest 5 errors by timestamp", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("level", "eq", "error")), "sort": map[string]any{"field": "ts", "desc": true}, "limit": 5, "select": []any{"ts", "trace.id"}},
			Want: answer(len(errs), "records", latest)},
		{Name: "the 2 latest errors of a root span, whole", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("level", "eq", "error"), cond("trace.parent", "exists", false)), "sort": map[string]any{"field": "ts", "desc": true}, "limit": 2},
			Want: answer(rootErrs, "records", []any{rootErrors[0].Row(), rootErrors[1].Row()})},
		{Name: "average latency of 5xx, nested numeric strings", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("http.status", "ge", 500)), "aggregate": map[string]any{"op": "avg", "field": "http.latency_ms"}},
			Want: answer(fivexx, "value", avg)},
		{Name: "a regular expression over messages", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("msg", "matches", "(?i)timeout|refused")), "aggregate": map[string]any{"op": "count"}},
			Want: answer(matched, "value", matched)},
		{Name: "errors and warnings by service", Tool: "search_logs", Section: "events",
			Args: map[string]any{"where": where(cond("level", "in", []any{"error", "warn"})), "group_by": "service", "aggregate": map[string]any{"op": "count"}},
			Want: answer(n, "groups", svc)},
	}
}

func lineCases() []Case {
	errs, worker3errs := 0, 0
	var worker3 []map[string]any
	for i, l := range LogLines(NumLines) {
		if strings.Contains(l, " ERROR ") {
			errs++
			if strings.Contains(l, "worker-3") {
				worker3errs++
				if len(worker3) < 3 {
					worker3 = append(worker3, map[string]any{"line": i + 1})
				}
			}
		}
	}
	return []Case{
		{Name: "the lines of a text: errors counted", Tool: "tail_log",
			Args: map[string]any{"where": where(cond("text", "matches", " ERROR ")), "aggregate": map[string]any{"op": "count"}},
			Want: answer(errs, "value", errs)},
		{Name: "the lines of a text: the first errors of a worker", Tool: "tail_log",
			Args: map[string]any{"where": where(cond("text", "contains", " error "), cond("text", "contains", "worker-3")), "select": []any{"line"}, "limit": 3},
			Want: answer(worker3errs, "records", worker3)},
	}
}

func malformed() []Case {
	return []Case{
		{Name: "where not an array", Tool: "query", Args: map[string]any{"where": map[string]any{"field": "status", "op": "eq", "value": "paid"}}, WantErr: "where must be an array"},
		{Name: "an unknown op", Tool: "query", Args: map[string]any{"where": where(cond("status", "like", "paid"))}, WantErr: "where[0].op must be one of eq ne lt le gt ge contains matches in exists"},
		{Name: "a field that is not a string", Tool: "query", Args: map[string]any{"where": where(cond("status", "eq", "paid"), map[string]any{"field": 3, "op": "eq", "value": 1})}, WantErr: "where[1].field must be a string"},
		{Name: "an unknown aggregate", Tool: "query", Args: map[string]any{"aggregate": map[string]any{"op": "median", "field": "amount"}}, WantErr: "aggregate.op must be one of count sum avg min max distinct"},
		{Name: "a question and a query", Tool: "query", Args: map[string]any{"query": ".", "where": where(cond("status", "eq", "paid"))}, WantErr: "give exactly one of"},
	}
}
