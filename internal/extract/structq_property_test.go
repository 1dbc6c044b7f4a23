package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/structq"
	"github.com/stretchr/testify/require"
)

// TestQuestionsAgreeWithAReference asks random structured questions of
// random records through what lro_extract runs (the engine a worker runs,
// in this process, and the glue that renders its answer) and compares
// each answer with refAnswer's, a plain evaluator of the semantics
// package structq documents: equal, or an error that names its cause
// (a field no record has, and each such field), never a 0 or a null the
// reference does not give. FuzzQuestionsAgreeWithAReference explores
// further seeds.
func TestQuestionsAgreeWithAReference(t *testing.T) {
	var n tally
	for seed := range uint64(raceSeeds) {
		n.add(checkQuestions(t, seed))
	}
	t.Logf("%+v", n)
	// The draw covers each kind of answer.
	require.Greater(t, n.Asked, 3*raceSeeds)
	for what, k := range map[string]int{"missing": n.Missing, "never": n.Never, "empty": n.Empty, "cut": n.Cut, "shown part": n.Part, "zero matched": n.Zero} {
		require.Greater(t, k, raceSeeds/30, what)
	}
}

// tally counts the kinds of answers checkQuestions checked.
type tally struct{ Asked, Missing, Never, Empty, Cut, Part, Zero int }

func (t *tally) add(u tally) {
	t.Asked, t.Missing, t.Never, t.Empty, t.Cut, t.Part, t.Zero = t.Asked+u.Asked, t.Missing+u.Missing, t.Never+u.Never, t.Empty+u.Empty, t.Cut+u.Cut, t.Part+u.Part, t.Zero+u.Zero
}

func FuzzQuestionsAgreeWithAReference(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkQuestions(t, seed) })
}

// checkQuestions asks five questions of one random file.
func checkQuestions(t *testing.T, seed uint64) (n tally) {
	r := rand.New(rand.NewPCG(seed, 38))
	lines := randomRecords(r)
	file := []byte(`{"type":"lro_header","schema_version":"generic","count":` + strconv.Itoa(len(lines)) + "}\n")
	for _, l := range lines {
		file = append(append(file, l...), '\n')
	}
	records := make([]any, len(lines))
	for i, l := range lines {
		require.NoError(t, json.Unmarshal([]byte(l), &records[i]))
	}
	e := extractworker.Engine{Files: newRecordCache(8 << 20), Queries: &queryCache{}}
	threshold := []int{1600, 300}[r.IntN(2)]
	for q := range 5 {
		args := randomQuestion(r)
		s, err := structq.Parse(args)
		if err != nil {
			continue // Parse's own tests check its messages
		}
		name := fmt.Sprintf("seed %d, question %d: %s over %d records", seed, q, mustText(args), len(lines))
		req := &extractworker.Request{Limits: Limits{}.withDefaults().sandbox()}
		req.Limits.MaxOutputBytes = max(16<<10, 16*threshold) // as extractJQ sets it
		values := structuredRequest(s, req)
		req.Values, err = json.Marshal(values)
		require.NoError(t, err)
		resp := e.Run(context.Background(), req, extractworker.Input{Key: fmt.Sprint(seed), Size: int64(len(file)), Open: func() (io.Reader, func(), error) {
			return bytes.NewReader(file[bytes.IndexByte(file, '\n')+1:]), func() {}, nil
		}})
		require.Nil(t, resp.Failure, name)
		text, err := answerQuestion(s, resp, threshold, func(b []byte) int { return (len(b) + 3) / 4 }, func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(file)), nil
		})
		want := refAnswer(t, args, records)
		n.Asked++
		if len(want.missing) > 0 {
			n.Missing++
			var fe *structq.FieldsError
			require.True(t, errors.As(err, &fe), "%s: want an error naming %v, got %q, %v", name, want.missing, text, err)
			for _, f := range want.missing {
				require.Contains(t, err.Error(), strconv.Quote(f), name)
			}
			require.Len(t, fe.Missing, len(want.missing), name)
			continue
		}
		require.NoError(t, err, name)
		require.LessOrEqual(t, (len(text)+3)/4, threshold+60, "%s: the answer is about the threshold", name)
		compareAnswer(t, name, s, text, want)
		n.Never += min(len(want.never), 1)
		if want.empty {
			n.Empty++
		}
		if strings.Contains(text, structq.CutMarker) {
			n.Cut++
		}
		if strings.Contains(text, "showing") {
			n.Part++
		}
		if want.matched == 0 {
			n.Zero++
		}
	}
	return n
}

// randomRecords returns up to 40 JSON lines: objects of a few shapes
// (nested objects and arrays, missing fields, numeric strings, nulls,
// long strings), the lines of a text, or values that are not objects.
func randomRecords(r *rand.Rand) []string {
	n := r.IntN(40)
	out := make([]string, n)
	kind := r.IntN(10)
	for i := range out {
		var v any
		switch {
		case kind == 0: // the lines of a text
			v = map[string]any{"line": i + 1, "text": pick(r, "ERROR worker-3 failed", "INFO ok", "warn: disk 91%", "")}
		case kind == 1 && r.IntN(2) == 0: // not objects
			v = pick[any](r, "plain text", 12.5, []any{1, "a"}, true, nil)
		default:
			m := map[string]any{"id": i}
			for _, f := range []string{"a", "b", "s", "t", "arr", "long", "mixed"} {
				if r.IntN(4) == 0 || f == "long" && r.IntN(3) > 0 {
					continue // missing
				}
				switch f {
				case "a", "mixed":
					m[f] = randomScalar(r)
				case "b":
					m[f] = pick[any](r, "1000.50", "999", "0.07", "-3.250", "007", "1e2", 12.5, -4, 0.25, "N/A")
				case "s":
					m[f] = pick[any](r, "paid", "PAID", "pending", "", "007", nil)
				case "t":
					m[f] = pick[any](r, map[string]any{"x": randomScalar(r), "y": "deep"}, map[string]any{"x": nil}, map[string]any{}, "flat", []any{map[string]any{"x": 1}})
				case "arr":
					m[f] = pick[any](r, []any{"Urgent", "vip"}, []any{}, []any{1.5, "2"}, []any{map[string]any{"x": "in"}}, "scalar")
				case "long":
					m[f] = strings.Repeat(pick(r, "ab", "z\"<", "é"), 500+r.IntN(6000))
				}
			}
			if kind == 2 { // a field of a uniform type
				m["b"] = pick[any](r, "N/A", "none")
			}
			v = m
		}
		out[i] = mustText(v)
	}
	return out
}

func randomScalar(r *rand.Rand) any {
	return pick[any](r, 1, 2.5, -7, "3", "3.0", "x", "abc", "", true, false, nil, "12345678901234567891")
}

// randomQuestion returns the arguments of a question over randomRecords'
// fields, and fields no record has.
func randomQuestion(r *rand.Rand) map[string]any {
	fields := []string{"id", "a", "b", "s", "t", "t.x", "t.y", "arr", "long", "mixed", "text", "line"}
	field := func() string {
		if r.IntN(16) == 0 {
			return pick(r, "zz", "t.x.q", "line", "text") // mostly no record's
		}
		return pick(r, fields[:10]...)
	}
	args := map[string]any{}
	var where []any
	for range r.IntN(3) {
		op := pick(r, structq.Ops...)
		var value any
		switch op {
		case "exists":
			value = r.IntN(2) == 0
		case "contains":
			value = pick(r, "a", "PAI", "1", "ur", "x", "worker")
		case "matches":
			value = pick(r, "^p", "[0-9]+", "d$", "^$", "a|z")
		case "in":
			value = []any{randomScalar(r), randomScalar(r)}
		case "lt", "le", "gt", "ge":
			value = pick[any](r, 999, "999", 2, "a", "N/A", 0, "3.0")
		default:
			value = randomScalar(r)
		}
		where = append(where, map[string]any{"field": field(), "op": op, "value": value})
	}
	if where != nil {
		args["where"] = where
	}
	switch r.IntN(4) {
	case 0:
		args["select"] = []any{field(), field()}
		fallthrough
	case 1:
		if r.IntN(2) == 0 {
			args["sort"] = map[string]any{"field": field(), "desc": r.IntN(2) == 0}
		}
		if r.IntN(2) == 0 {
			args["limit"] = 1 + r.IntN(5)
		}
	case 2, 3:
		agg := map[string]any{"op": pick(r, structq.Aggregates...)}
		if agg["op"] != "count" {
			agg["field"] = field()
		}
		args["aggregate"] = agg
		if r.IntN(2) == 0 {
			args["group_by"] = field()
			if r.IntN(2) == 0 {
				args["limit"] = 1 + r.IntN(3)
			}
		}
	}
	// The arguments as a client sends them: JSON.
	var m map[string]any
	if err := json.Unmarshal([]byte(mustText(args)), &m); err != nil {
		panic(err)
	}
	return m
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func mustText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ref is the reference's answer.
type ref struct {
	missing []string // fields no record has: the answer is an error
	matched int
	value   any   // count, distinct: int; sum: *big.Rat; avg: float64; min, max: the value
	items   []any // records (whole, or the selected fields), or groups {key, value, count}
	total   int   // records or groups after limit
	never   []int // conditions no record's value could meet for its type
	empty   bool  // an aggregate with nothing to aggregate in matched records
}

// refAnswer answers the question args over records plainly: one pass
// per step, exact rationals for numbers.
func refAnswer(t *testing.T, args map[string]any, records []any) ref {
	var out ref
	var fields []string
	where, _ := args["where"].([]any)
	for _, c := range where {
		fields = append(fields, c.(map[string]any)["field"].(string))
	}
	sel, _ := args["select"].([]any)
	for _, f := range sel {
		fields = append(fields, f.(string))
	}
	sort, _ := args["sort"].(map[string]any)
	if sort != nil {
		fields = append(fields, sort["field"].(string))
	}
	agg, _ := args["aggregate"].(map[string]any)
	if agg != nil && agg["field"] != nil {
		fields = append(fields, agg["field"].(string))
	}
	group, _ := args["group_by"].(string)
	if group != "" {
		fields = append(fields, group)
	}
	for _, f := range fields {
		if !slices.Contains(out.missing, f) && !slices.ContainsFunc(records, func(r any) bool { _, ok := refGet(r, f); return ok }) {
			out.missing = append(out.missing, f)
		}
	}
	if len(out.missing) > 0 {
		return out
	}
	var matched []any
	for _, r := range records {
		ok := true
		for _, c := range where {
			c := c.(map[string]any)
			v, _ := refGet(r, c["field"].(string))
			ok = ok && refHolds(c["op"].(string), v, c["value"])
		}
		if ok {
			matched = append(matched, r)
		}
	}
	out.matched = len(matched)
	for i, c := range where {
		c := c.(map[string]any)
		op, x := c["op"].(string), c["value"]
		if op == "exists" || (op == "eq" || op == "ne") && x == nil {
			continue
		}
		present, typed := false, false
		for _, r := range records {
			v, ok := refGet(r, c["field"].(string))
			present = present || ok
			typed = typed || v != nil && refTyped(op, v, x)
		}
		if present && !typed {
			out.never = append(out.never, i)
		}
	}
	limit := -1
	if l, ok := args["limit"].(float64); ok {
		limit = int(l)
	}
	switch {
	case group != "":
		type g struct {
			key  any
			vals []any
		}
		var groups []*g
		byKey := map[string]*g{}
		for _, r := range matched {
			k, _ := refGet(r, group)
			id := refKey(k)
			if byKey[id] == nil {
				byKey[id] = &g{key: k}
				groups = append(groups, byKey[id])
			}
			v, _ := refGet(r, fieldOf(agg))
			byKey[id].vals = append(byKey[id].vals, v)
		}
		values := make([]any, len(groups))
		out.empty = len(groups) > 0
		for i, g := range groups {
			values[i] = refAggregate(agg["op"].(string), g.vals)
			out.empty = out.empty && refEmpty(agg["op"].(string), values[i])
		}
		idx := make([]int, len(groups))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			if c := refCompare(values[b], values[a]); c != 0 {
				return c
			}
			return refCompare(groups[a].key, groups[b].key)
		})
		if limit >= 0 && len(idx) > limit {
			idx = idx[:limit]
		}
		for _, i := range idx {
			out.items = append(out.items, map[string]any{"key": groups[i].key, "value": values[i], "count": len(groups[i].vals)})
		}
		out.total = len(idx)
	case agg != nil:
		var vals []any
		for _, r := range matched {
			v, _ := refGet(r, fieldOf(agg))
			vals = append(vals, v)
		}
		out.value = refAggregate(agg["op"].(string), vals)
		out.empty = len(matched) > 0 && refEmpty(agg["op"].(string), out.value)
	default:
		if sort != nil {
			desc, _ := sort["desc"].(bool)
			slices.SortStableFunc(matched, func(a, b any) int {
				va, _ := refGet(a, sort["field"].(string))
				vb, _ := refGet(b, sort["field"].(string))
				if desc {
					return refCompare(vb, va)
				}
				return refCompare(va, vb)
			})
		}
		if limit >= 0 && len(matched) > limit {
			matched = matched[:limit]
		}
		for _, r := range matched {
			if sel == nil {
				out.items = append(out.items, r)
				continue
			}
			m := map[string]any{}
			for _, f := range sel {
				m[f.(string)], _ = refGet(r, f.(string))
			}
			out.items = append(out.items, m)
		}
		out.total = len(matched)
	}
	return out
}

func fieldOf(agg map[string]any) string {
	f, _ := agg["field"].(string)
	return f
}

// refGet returns the value at the dotted path f and whether the record
// has it (each step an object with the key).
func refGet(v any, f string) (any, bool) {
	for _, k := range strings.Split(f, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

var decimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// refNum reads a number, or a string that is one as JSON writes it,
// exactly: a float as its shortest text.
func refNum(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case *big.Rat: // a sum
		return x, true
	case int: // a count
		return big.NewRat(int64(x), 1), true
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		if len(x) > 64 || !decimal.MatchString(x) {
			return nil, false
		}
		s = x
	default:
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

func refEqual(v, x any) bool {
	if xn, ok := refNum(x); ok {
		if vn, ok := refNum(v); ok {
			return vn.Cmp(xn) == 0
		}
	}
	switch x.(type) {
	case string, bool, nil:
		return v == x
	}
	return false
}

func refHolds(op string, v, x any) bool {
	switch op {
	case "exists":
		return (v != nil) == x.(bool)
	case "eq":
		return refEqual(v, x)
	case "ne":
		return !refEqual(v, x)
	case "in":
		return slices.ContainsFunc(x.([]any), func(y any) bool { return refEqual(v, y) })
	case "contains", "matches":
		if list, ok := v.([]any); ok {
			return slices.ContainsFunc(list, func(e any) bool { return refText(op, e, x.(string)) })
		}
		return refText(op, v, x.(string))
	}
	var c int
	if xn, ok := refNum(x); ok {
		vn, ok := refNum(v)
		if !ok {
			return false
		}
		c = vn.Cmp(xn)
	} else {
		s, ok := v.(string)
		if !ok {
			return false
		}
		c = strings.Compare(s, x.(string))
	}
	switch op {
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	case "gt":
		return c > 0
	}
	return c >= 0
}

func refText(op string, v any, x string) bool {
	var s string
	switch y := v.(type) {
	case string:
		s = y
	case float64:
		s = strconv.FormatFloat(y, 'g', -1, 64)
	default:
		return false
	}
	if op == "contains" {
		return strings.Contains(strings.ToLower(s), strings.ToLower(x))
	}
	return regexp.MustCompile(x).MatchString(s)
}

// refTyped reports whether a condition could hold of some value of v's
// type (v not null).
func refTyped(op string, v, x any) bool {
	switch op {
	case "contains", "matches":
		if list, ok := v.([]any); ok {
			return slices.ContainsFunc(list, func(e any) bool { return refTextual(e) })
		}
		return refTextual(v)
	case "in":
		return slices.ContainsFunc(x.([]any), func(y any) bool { return y == nil || refSameType("eq", v, y) })
	}
	return refSameType(op, v, x)
}

func refTextual(v any) bool {
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

func refSameType(op string, v, x any) bool {
	if _, ok := refNum(x); ok {
		if _, ok := refNum(v); ok {
			return true
		}
		if op != "eq" && op != "ne" {
			return false // ordered as numbers only
		}
	}
	switch x.(type) {
	case string:
		_, ok := v.(string)
		return ok
	case bool:
		_, ok := v.(bool)
		return ok
	}
	return false
}

// refRank is the order of sort: null, booleans, numbers, strings,
// arrays, objects.
func refRank(v any) int {
	if _, ok := refNum(v); ok {
		return 2
	}
	switch v.(type) {
	case bool:
		return 1
	case string:
		return 3
	case []any:
		return 4
	case map[string]any:
		return 5
	}
	return 0
}

func refCompare(a, b any) int {
	ra, rb := refRank(a), refRank(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 1:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case y:
			return -1
		}
		return 1
	case 2:
		x, _ := refNum(a)
		y, _ := refNum(b)
		return x.Cmp(y)
	case 3:
		return strings.Compare(a.(string), b.(string))
	case 4, 5:
		return strings.Compare(mustText(a), mustText(b))
	}
	return 0
}

// refKey tells values apart for distinct and group_by: numbers by value.
func refKey(v any) string {
	if n, ok := refNum(v); ok {
		return "#" + n.RatString()
	}
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%T:%s", v, mustText(v))
}

func refAggregate(op string, vals []any) any {
	switch op {
	case "count":
		return len(vals)
	case "distinct":
		seen := map[string]bool{}
		for _, v := range vals {
			if v != nil {
				seen[refKey(v)] = true
			}
		}
		return len(seen)
	case "sum", "avg":
		sum, n := new(big.Rat), 0
		for _, v := range vals {
			if x, ok := refNum(v); ok {
				sum.Add(sum, x)
				n++
			}
		}
		if n == 0 {
			return nil
		}
		if op == "sum" {
			return sum
		}
		f, _ := sum.Quo(sum, big.NewRat(int64(n), 1)).Float64()
		return f
	}
	var best any
	for _, v := range vals {
		if v == nil {
			continue
		}
		if c := refCompare(v, best); best == nil || op == "min" && c < 0 || op == "max" && c > 0 {
			best = v
		}
	}
	return best
}

func refEmpty(op string, v any) bool {
	return op != "count" && (v == nil || v == 0)
}

// compareAnswer checks the answer text against the reference: the
// first line's JSON value by value (numbers exactly, a value cut to fit
// as a prefix of the reference's), the items shown a prefix of the
// reference's, and the notes for conditions no value could meet.
func compareAnswer(t *testing.T, name string, s *structq.Spec, text string, want ref) {
	first, notes, _ := strings.Cut(text, "\n")
	dec := json.NewDecoder(strings.NewReader(first))
	dec.UseNumber()
	var got map[string]any
	require.NoError(t, dec.Decode(&got), "%s: %q", name, text)
	require.Equal(t, json.Number(strconv.Itoa(want.matched)), got["matched"], "%s: matched: %q", name, text)
	for i := range s.Where {
		note := fmt.Sprintf("[lro_extract: where[%d] (", i)
		require.Equal(t, slices.Contains(want.never, i), strings.Contains(notes, note), "%s: a note on where[%d]: %q", name, i, notes)
	}
	if s.Aggregate != nil {
		require.Equal(t, want.empty, strings.Contains(notes, "none of the"), "%s: a note on the aggregate: %q", name, notes)
	}
	if s.Aggregate != nil && s.GroupBy == "" {
		sameValue(t, name+": value", want.value, got["value"])
		return
	}
	items, _ := got["records"].([]any)
	if s.GroupBy != "" {
		items, _ = got["groups"].([]any)
	}
	require.LessOrEqual(t, len(items), len(want.items), name)
	if len(items) < want.total {
		require.Contains(t, notes, fmt.Sprintf("showing %d of %d", len(items), want.total), name)
	} else {
		require.Len(t, items, want.total, name)
	}
	for i, item := range items {
		w := want.items[i]
		if s.GroupBy != "" {
			g, wg := item.(map[string]any), w.(map[string]any)
			sameValue(t, fmt.Sprintf("%s: group %d key", name, i), wg["key"], g["key"])
			sameValue(t, fmt.Sprintf("%s: group %d value", name, i), wg["value"], g["value"])
			sameValue(t, fmt.Sprintf("%s: group %d count", name, i), wg["count"], g["count"])
			continue
		}
		if s.Select == nil {
			sameValue(t, fmt.Sprintf("%s: record %d", name, i), w, item)
			continue
		}
		m, wm := item.(map[string]any), w.(map[string]any)
		for _, f := range s.Select {
			sameValue(t, fmt.Sprintf("%s: record %d, %s", name, i, f), wm[f], m[f])
		}
	}
}

// sameValue checks a value of the answer (decoded with UseNumber)
// against the reference's: numbers exactly, a string or the JSON text of
// an array or object ending in structq.CutMarker as a prefix of it.
func sameValue(t *testing.T, name string, want, got any) {
	if s, ok := got.(string); ok && strings.HasSuffix(s, structq.CutMarker) {
		full, isString := want.(string)
		if !isString {
			full = mustText(want)
		}
		require.True(t, strings.HasPrefix(full, strings.TrimSuffix(s, structq.CutMarker)), "%s: %.80q is not cut from %.80q", name, s, full)
		return
	}
	switch w := want.(type) {
	case *big.Rat:
		n, ok := got.(json.Number)
		require.True(t, ok, "%s: want %s, got %v", name, w.FloatString(4), got)
		g, ok := new(big.Rat).SetString(string(n))
		require.True(t, ok && g.Cmp(w) == 0, "%s: want %s, got %s", name, w.RatString(), n)
	case int:
		require.Equal(t, json.Number(strconv.Itoa(w)), got, name)
	default:
		require.Equal(t, normalJSON(t, mustText(want)), normalJSON(t, mustText(got)), name)
	}
}

// normalJSON decodes s with numbers as float64s, for values compared as
// JSON.
func normalJSON(t *testing.T, s string) any {
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}
