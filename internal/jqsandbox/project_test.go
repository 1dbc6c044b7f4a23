package jqsandbox

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// projInput holds the sample records and lines that projection must
// treat as the whole decoder does: duplicate keys, escaped keys, nested
// objects in skipped fields, a line of two values, non-object records,
// odd spacing.
var projInput = sampleJSONL + `{"id":"d-1","title":"dup","title":"second","namespace":"_x","meta":{"b":1,"a":{"z":1,"y":2}},"tags":["t"]}
{"id":"e-1","ti\u0074le":"escaped key","namespace":"_semantic/esc","n\"s":{"q":1,"p":2}}
  { "id" : "s-1" , "title" : "spaced" , "namespace" : "_semantic/s" , "provenance" : { "confidence" : 1 , "source" : "x" } }
{"id":"m-1","title":"two"} {"id":"m-2","title":"values"}
[1,2,3]
"a string record"
{"id":"deep","title":{"nested":{"title":"x"}},"namespace":null,"provenance":[{"confidence":2}],"extra":{"k":[{"a":1,"b":2},{"b":1,"a":2}]}}
`

// projQueries are queries that projection must answer as whole records.
var projQueries = []struct {
	q    string
	mode Mode
}{
	{`[.title,.namespace]|@tsv`, Stream},
	{`select(.namespace|strings|startswith("_semantic"))`, Stream},
	{`select(.title|strings|test("cach";"i"))`, Stream},
	{`{id,title,namespace}`, Stream},
	{`group_by(.namespace)|map({namespace:.[0].namespace,count:length})`, Slurp},
	{`select(.tags|arrays|index("security"))`, Stream},
	{`sort_by(.created)`, Slurp},
	{`map(.namespace)|unique`, Slurp},
	{`sort_by(.provenance.confidence?)|reverse`, Slurp},
	{`select(.provenance.confidence? > 0.5) | .id`, Stream},
	{`.provenance`, Stream},
	{`.provenance | del(.source) + {extra: 1}`, Stream},
	{`.meta | to_entries`, Stream},
	{`{title} + (.meta // {})`, Stream},
	{`.title as $t | select($t == "dup") | {t: $t, id}`, Stream},
	{`if .tags then .tags | length else "none" end`, Stream},
	{`.provenance | keys`, Stream},
	{`try (.title | ascii_downcase) catch "err: \(.)"`, Stream},
	{`[.[] | select(.size? > 100) | .id]`, Slurp},
	{`map(.provenance) | map(.confidence?) | add?`, Slurp},
	{`length`, Stream},
	{`.extra.k[0]`, Stream},
	{`first(.[] | select(.namespace == "_x"))`, Slurp},
	{`.[0:2] | map(.id)`, Slurp},
	{`reduce .[] as $r (0; . + ($r.size? // 0 | numbers))`, Slurp},
	{`select(.id) | .title | type`, Stream},
	{`tojson`, Stream},
	{`.`, Stream},
	{`to_entries | map(.key)`, Stream},
	{`[paths] | length`, Stream},
	{`getpath(["provenance","source"])`, Stream},
	{`[..] | length`, Stream},
	{`.title? // .id`, Stream},
	{`min_by(.size?) | .id`, Slurp},
	{`select(.title | type == "object")`, Stream},
	{`select(.meta)`, Stream},
}

// runBoth runs query over input as compiled, and again with the
// projections cleared (whole records), and returns both.
func runBoth(t *testing.T, query, input string, mode Mode) (got, want string) {
	t.Helper()
	q, err := Compile(query, nil, testLimits())
	if err != nil {
		return "", ""
	}
	show := func(q *Query) string {
		res, err := q.Run(context.Background(), strings.NewReader(input), mode, nil, testLimits())
		var b strings.Builder
		for _, v := range res.Values {
			b.Write(v)
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "truncated=%v omitted=%d err=%v", res.Truncated, res.Omitted, err)
		return b.String()
	}
	whole := *q
	whole.streamProj, whole.slurpProj, whole.selectProj, whole.sortProj = Projection{}, Projection{}, Projection{}, Projection{}
	return show(q), show(&whole)
}

func TestProjectionNeverChangesResults(t *testing.T) {
	for _, tc := range projQueries {
		got, want := runBoth(t, tc.q, projInput, tc.mode)
		require.Equal(t, want, got, "%s (%v)", tc.q, tc.mode)
	}
}

func TestProjectionOfQueries(t *testing.T) {
	for _, tc := range []struct {
		q            string
		mode         Mode
		want, lazySe string
	}{
		{`[.title,.namespace]|@tsv`, Stream, "{namespace:*,title:*}", "*"},
		{`select(.title|test("x";"i"))`, Stream, "*", "{title:*}"},
		{`group_by(.namespace)|map({namespace:.[0].namespace,count:length})`, Slurp, "{namespace:*}", "*"},
		{`sort_by(.provenance.confidence)|reverse`, Slurp, "*", "*"},
		{`.a.b as $x | $x.c`, Stream, "{a:{b:{c:*}}}", "*"},
		{`select(.a.b)`, Stream, "*", "{a:{b}}"},
		{`.`, Stream, "*", "*"},
		{`keys`, Stream, "*", "*"},
		{`.. | .a?`, Stream, "*", "*"},
		{`to_entries`, Stream, "*", "*"},
		{`tojson`, Stream, "*", "*"},
		{`getpath([.k])`, Stream, "*", "*"},
		{`def f: .a; f`, Stream, "*", "*"},
		{`.a | keys`, Stream, "{a:*}", "*"},
		{`.a = 1`, Stream, "*", "*"},
	} {
		q, err := Compile(tc.q, nil, Limits{})
		require.NoError(t, err)
		require.Equal(t, tc.want, q.Projection(tc.mode).String(), tc.q)
		require.Equal(t, tc.lazySe, q.selectProj.String(), tc.q)
		// A recipe (trusted) projects alike, objects or not.
		tq, err := CompileTrusted(tc.q, nil)
		require.NoError(t, err)
		require.Equal(t, tc.want, tq.Projection(tc.mode).String(), "trusted %s", tc.q)
		require.Equal(t, tc.lazySe, tq.selectProj.String(), "trusted %s", tc.q)
	}
}

func TestProjectionRecords(t *testing.T) {
	// RunRecords over records decoded with a covering projection answers
	// as over whole records, and refuses records that do not cover.
	for _, tc := range projQueries {
		q, err := Compile(tc.q, nil, testLimits())
		require.NoError(t, err)
		whole, err := DecodeRecords(strings.NewReader(projInput), testLimits())
		require.NoError(t, err)
		part, err := DecodeProjected(strings.NewReader(projInput), testLimits(), q.Projection(tc.mode))
		require.NoError(t, err)
		if !q.Projection(tc.mode).Whole() {
			require.Less(t, part.Bytes(), whole.Bytes(), tc.q)
		}
		want, werr := q.RunRecords(context.Background(), whole, tc.mode, nil, testLimits())
		got, gerr := q.RunRecords(context.Background(), part, tc.mode, nil, testLimits())
		require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), tc.q)
		require.Equal(t, want, got, tc.q)
		// So do records decoded for the cache: a select's keep its lines.
		cached, err := DecodeProjected(strings.NewReader(projInput), testLimits(), q.CacheProjection(tc.mode))
		require.NoError(t, err)
		got, gerr = q.RunRecords(context.Background(), cached, tc.mode, nil, testLimits())
		require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), tc.q)
		require.Equal(t, want, got, tc.q)
	}
	q, err := Compile(`.title`, nil, testLimits())
	require.NoError(t, err)
	other, err := Compile(`.id`, nil, testLimits())
	require.NoError(t, err)
	recs, err := DecodeProjected(strings.NewReader(projInput), testLimits(), other.Projection(Stream))
	require.NoError(t, err)
	_, err = q.RunRecords(context.Background(), recs, Stream, nil, testLimits())
	require.ErrorContains(t, err, "does not cover")
	require.True(t, other.Projection(Stream).Union(q.Projection(Stream)).Covers(q.Projection(Stream)))
}

func TestLazySort(t *testing.T) {
	// A recipe or a query that sorts the slurped records decodes what it
	// sorts by, and whole only the records it shows: it answers as over
	// whole records, read from a file, cached, or kept, its output cut or
	// not.
	objects := strings.Join(strings.Split(projInput, "\n")[:12], "\n") + "\n" // the objects
	sorts := []string{`sort_by(.created)`, `sort_by(.provenance.confidence)|reverse`, `sort_by(.title)`, `sort_by(.tags)|reverse`,
		`sort_by(.created)|reverse|.[:3]`, `sort_by(.title)|.[2:-1]|reverse`, `sort_by(.created)|.[-4:]`}
	for i, query := range append(sorts, sorts...) {
		compile := func(query string, _ []string) (*Query, error) { return Compile(query, nil, testLimits()) }
		if i < len(sorts) {
			compile = CompileTrusted
		}
		q, err := compile(query, nil)
		require.NoError(t, err)
		require.False(t, q.sortProj.Whole(), query)
		require.True(t, q.CacheProjection(Slurp).lines, query)
		whole := *q
		whole.slurpProj, whole.sortProj = Projection{}, Projection{}
		for _, input := range []string{objects, projInput, strings.Repeat(sampleJSONL, 30)} {
			for _, max := range []int{0, 600} {
				lim := testLimits()
				lim.MaxOutputBytes = max
				show := func(res Result, err error) string {
					return fmt.Sprintf("%s elements=%d truncated=%v omitted=%d err=%v", strs(res.Values), res.Elements, res.Truncated, res.Omitted, err)
				}
				want := show(whole.Run(context.Background(), strings.NewReader(input), Slurp, nil, lim))
				require.Equal(t, want, show(q.Run(context.Background(), strings.NewReader(input), Slurp, nil, lim)), "%s max=%d", query, max)
				recs, err := DecodeProjected(strings.NewReader(input), lim, q.CacheProjection(Slurp))
				require.NoError(t, err)
				require.Equal(t, want, show(q.RunRecords(context.Background(), recs, Slurp, nil, lim)), "%s max=%d cached", query, max)
				for _, offsets := range []bool{false, true} {
					res, kept, err := q.RunKeeping(context.Background(), strings.NewReader(input), Slurp, nil, lim, 1<<20, fileIf(offsets, input))
					require.Equal(t, want, show(res, err), "%s max=%d keeping", query, max)
					require.NotNil(t, kept)
					if kept.NeedsFile() {
						kept = kept.At(strings.NewReader(input))
					}
					require.Equal(t, want, show(q.RunRecords(context.Background(), kept, Slurp, nil, lim)), "%s max=%d kept offsets=%v", query, max, offsets)
				}
			}
		}
	}
	for _, query := range []string{`sort_by(.created)|.[0]`, `sort_by(.created)|map(.id)`, `def f: .; sort_by(f)`, `sort_by(.created)|reverse|.[0]`,
		`sort_by(.created)|.[:.[0].n]`, `sort_by(.created)|.[:$n]`, `sort_by(.created) as $x|$x`, `sort_by(.created)|first`} {
		q, err := CompileTrusted(query, []string{"n"})
		require.NoError(t, err)
		require.True(t, q.sortProj.Whole(), "%s does not output the records as they are", query)
	}
}

// fileIf returns a ReaderAt of input when file is set, else nil.
func fileIf(file bool, input string) io.ReaderAt {
	if !file {
		return nil
	}
	return strings.NewReader(input)
}

// runCached runs query in Stream mode over the records of input decoded
// as a cache keeps them for it (Query.CacheProjection), as runBoth shows
// results.
func runCached(t *testing.T, query, input string) string {
	t.Helper()
	q, err := Compile(query, nil, testLimits())
	if err != nil {
		return ""
	}
	recs, err := DecodeProjected(strings.NewReader(input), testLimits(), q.CacheProjection(Stream))
	require.NoError(t, err)
	res, err := q.RunRecords(context.Background(), recs, Stream, nil, testLimits())
	var b strings.Builder
	for _, v := range res.Values {
		b.Write(v)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "truncated=%v omitted=%d err=%v", res.Truncated, res.Omitted, err)
	return b.String()
}

func TestCacheProjectionOfSelect(t *testing.T) {
	// A select keeps what its condition reads, and the lines: several
	// times smaller than the records decoded whole.
	input := strings.Repeat(sampleJSONL, 20)
	q, err := Compile(`select(.title|test("cach";"i"))`, nil, testLimits())
	require.NoError(t, err)
	p := q.CacheProjection(Stream)
	require.Equal(t, "{title:*}+lines", p.String())
	require.Equal(t, "*", q.CacheProjection(Slurp).String())
	whole, err := DecodeRecords(strings.NewReader(input), testLimits())
	require.NoError(t, err)
	recs, err := DecodeProjected(strings.NewReader(input), testLimits(), p)
	require.NoError(t, err)
	require.Less(t, recs.Bytes(), whole.Bytes()/2)
	want, err := q.RunRecords(context.Background(), whole, Stream, nil, testLimits())
	require.NoError(t, err)
	require.NotEmpty(t, want.Values)
	got, err := q.RunRecords(context.Background(), recs, Stream, nil, testLimits())
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Lines are part of what a projection keeps.
	plain := q.selectProj
	require.True(t, p.Covers(plain))
	require.False(t, plain.Covers(p))
	require.True(t, plain.Union(p).Covers(p))
	require.True(t, Projection{}.Covers(p))
	// Records without lines do not answer the select, which outputs
	// whole records.
	_, err = q.RunRecords(context.Background(), &Records{proj: plain}, Stream, nil, testLimits())
	require.ErrorContains(t, err, "does not cover")
	// Nor do records with the lines of another condition's fields.
	other, err := Compile(`select(.id == "x")`, nil, testLimits())
	require.NoError(t, err)
	recs, err = DecodeProjected(strings.NewReader(input), testLimits(), other.CacheProjection(Stream))
	require.NoError(t, err)
	_, err = q.RunRecords(context.Background(), recs, Stream, nil, testLimits())
	require.ErrorContains(t, err, "does not cover")
}

func TestRunKeeping(t *testing.T) {
	// A run that reads every record returns them as RunRecords takes
	// them, within the bytes it may keep; they answer as whole records,
	// reading their lines again from the file when kept with offsets.
	for _, tc := range projQueries {
		q, err := Compile(tc.q, nil, testLimits())
		require.NoError(t, err)
		whole, err := DecodeRecords(strings.NewReader(projInput), testLimits())
		require.NoError(t, err)
		want, werr := q.RunRecords(context.Background(), whole, tc.mode, nil, testLimits())
		// (Records in memory are numbered as if the file had no blank
		// line; a file's keep their line numbers.)
		cold, cerr := q.Run(context.Background(), strings.NewReader(projInput), tc.mode, nil, testLimits())
		for _, offsets := range []bool{false, true} {
			got, kept, gerr := q.RunKeeping(context.Background(), strings.NewReader(projInput), tc.mode, nil, testLimits(), 1<<20, fileIf(offsets, projInput))
			require.Equal(t, fmt.Sprint(cerr), fmt.Sprint(gerr), tc.q)
			require.Equal(t, cold, got, tc.q)
			require.NotNil(t, kept, tc.q)
			require.Equal(t, q.CacheProjection(tc.mode), kept.Projection(), tc.q)
			require.Equal(t, offsets && q.CacheProjection(tc.mode).lines, kept.NeedsFile(), tc.q)
			if kept.NeedsFile() {
				kept = kept.At(strings.NewReader(projInput))
			}
			again, aerr := q.RunRecords(context.Background(), kept, tc.mode, nil, testLimits())
			require.Equal(t, fmt.Sprint(werr), fmt.Sprint(aerr), "%s offsets=%v", tc.q, offsets)
			require.Equal(t, want, again, "%s offsets=%v", tc.q, offsets)

			_, kept, _ = q.RunKeeping(context.Background(), strings.NewReader(projInput), tc.mode, nil, testLimits(), 100, fileIf(offsets, projInput))
			require.Nil(t, kept, "%s: more than 100 bytes", tc.q)
		}
	}

	// Over several batches, whose maps are filled again rather than made.
	big := strings.Repeat(sampleJSONL, 40)
	wholeBig, err := DecodeRecords(strings.NewReader(big), testLimits())
	require.NoError(t, err)
	checked := 0
	for _, tc := range projQueries {
		if tc.mode != Stream {
			continue
		}
		q, err := Compile(tc.q, nil, testLimits())
		require.NoError(t, err)
		_, kept, _ := q.RunKeeping(context.Background(), strings.NewReader(big), Stream, nil, testLimits(), 1<<22, strings.NewReader(big))
		if kept == nil {
			continue // the query failed on a record before the last was read
		}
		checked++
		if kept.NeedsFile() {
			kept = kept.At(strings.NewReader(big))
		}
		want, werr := q.RunRecords(context.Background(), wholeBig, Stream, nil, testLimits())
		got, gerr := q.RunRecords(context.Background(), kept, Stream, nil, testLimits())
		require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), tc.q)
		require.Equal(t, want, got, tc.q)
	}
	require.Greater(t, checked, 20)

	// Kept records take a fraction of the memory of maps.
	input := strings.Repeat(sampleJSONL, 50)
	q, err := Compile(`[.title,.namespace]|@tsv`, nil, testLimits())
	require.NoError(t, err)
	part, err := DecodeProjected(strings.NewReader(input), testLimits(), q.Projection(Stream))
	require.NoError(t, err)
	_, kept, err := q.RunKeeping(context.Background(), strings.NewReader(input), Stream, nil, testLimits(), 1<<20, nil)
	require.NoError(t, err)
	require.Equal(t, part.Len(), kept.Len())
	require.Less(t, kept.Bytes(), part.Bytes()/2)

	// Without their file, records kept with offsets cannot give a select
	// its outputs.
	q, err = Compile(`select(.id == "m-003")`, nil, testLimits())
	require.NoError(t, err)
	_, kept, err = q.RunKeeping(context.Background(), strings.NewReader(sampleJSONL), Stream, nil, testLimits(), 1<<20, strings.NewReader(sampleJSONL))
	require.NoError(t, err)
	_, err = q.RunRecords(context.Background(), kept, Stream, nil, testLimits())
	require.ErrorContains(t, err, "file is needed")
	res, err := q.RunRecords(context.Background(), kept.At(strings.NewReader(sampleJSONL)), Stream, nil, testLimits())
	require.NoError(t, err)
	require.Len(t, res.Values, 1)
	require.Contains(t, string(res.Values[0]), `"provenance"`)
}

// TestProjectionRandom composes random queries from fragments and checks
// that projection does not change their results.
func TestProjectionRandom(t *testing.T) {
	paths := []string{".id", ".title", ".namespace", ".tags", ".provenance", ".provenance.confidence", ".meta.a", ".size", ".extra.k", "."}
	unary := []string{"type", "length", "tostring", "ascii_downcase?", "keys?", "tojson", ".[0]?", "first?", "not", "select(.)", "values", "strings"}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	gen := func() string {
		switch r.IntN(7) {
		case 0:
			return "select(" + pick(paths) + " | " + pick(unary) + ") | " + pick(paths)
		case 1:
			return "{a: " + pick(paths) + ", b: (" + pick(paths) + " | " + pick(unary) + ")}"
		case 2:
			return "[" + pick(paths) + ", " + pick(paths) + "] | " + pick(unary)
		case 3:
			return pick(paths) + " as $x | " + pick(paths) + " | if . then $x else " + pick(paths) + " end"
		case 4:
			return "try (" + pick(paths) + " | " + pick(unary) + ") catch ."
		case 5:
			return "select(" + pick(paths) + " | " + pick(unary) + ")"
		}
		return pick(paths) + " // " + pick(paths) + " | " + pick(unary)
	}
	for range 300 {
		query := gen()
		got, want := runBoth(t, query, projInput, Stream)
		require.Equal(t, want, got, query)
		require.Equal(t, want, runCached(t, query, projInput), "cached %s", query)
		slurped := "map(" + query + ")"
		got, want = runBoth(t, slurped, projInput, Slurp)
		require.Equal(t, want, got, slurped)
	}
}

// TestRunsReuseBuffers: runs hand their read buffers and batches to the
// next ones, lazy (lines kept) or not, cut short or not; each answers as
// a run of its own.
func TestRunsReuseBuffers(t *testing.T) {
	input := strings.Repeat(sampleJSONL, 40) // several batches
	queries := []struct {
		q    string
		mode Mode
	}{
		{`select(.title | strings | test("c"; "i"))`, Stream}, // lazy: lines kept
		{`.id`, Stream},
		{`select(.namespace)`, Stream},
		{`first(.[] | .id)`, Slurp},
		{`.title`, Stream},
	}
	whole, err := DecodeRecords(strings.NewReader(input), testLimits())
	require.NoError(t, err)
	want := map[string][]string{}
	for _, tc := range queries {
		q, err := Compile(tc.q, nil, testLimits())
		require.NoError(t, err)
		res, err := q.RunRecords(context.Background(), whole, tc.mode, nil, testLimits())
		require.NoError(t, err, tc.q)
		want[tc.q] = strs(res.Values)
	}
	for range 5 {
		for _, tc := range queries {
			got, err := run(t, tc.q, input, tc.mode, testLimits(), nil)
			require.NoError(t, err, tc.q)
			require.Equal(t, want[tc.q], strs(got.Values), tc.q)
			// A run stopped early by its output cap leaves batches behind.
			lim := testLimits()
			lim.MaxOutputs = 3
			_, err = run(t, tc.q, input, tc.mode, lim, nil)
			require.NotErrorIs(t, err, ErrBusy)
		}
	}
}

// TestBatchReset: a batch that held lazy lines, reused for records
// without, has no line for them.
func TestBatchReset(t *testing.T) {
	b := &batch{}
	b.vals, b.lines = append(b.vals, 1), append(b.lines, 1)
	b.raw, b.ends = append(b.raw, `{"a":1}`...), append(b.ends, 7)
	require.Equal(t, `{"a":1}`, string(b.rawLine(0)))
	b.reset()
	b.vals, b.lines = append(b.vals, 2), append(b.lines, 2)
	require.Nil(t, b.rawLine(0))
	require.Equal(t, 2, b.line(0))
}
