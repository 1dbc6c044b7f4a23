package memstore

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tokens(text string) []string {
	var out []string
	tokenize(text, nil, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

func TestGenerateDeterministic(t *testing.T) {
	a, b := Generate(500, 7), Generate(500, 7)
	require.Equal(t, a, b)
	require.NotEqual(t, a, Generate(500, 8))
	require.Equal(t, a[:100], Generate(100, 7), "prefix of a larger run must match")
	assert.Empty(t, Generate(0, 7))
	assert.Empty(t, Generate(-3, 7))
}

func TestGenerateAverageSize(t *testing.T) {
	mems := Generate(1000, 42)
	total := 0
	for i := range mems {
		b, err := json.Marshal(&mems[i])
		require.NoError(t, err)
		total += len(b)
	}
	avg := float64(total) / float64(len(mems))
	t.Logf("average compact full record: %.1f bytes", avg)
	assert.GreaterOrEqual(t, avg, 550.0)
	assert.LessOrEqual(t, avg, 700.0)
}

func TestGenerateShape(t *testing.T) {
	mems := Generate(2000, 3)
	nsByType := map[string]map[string]bool{}
	ids := map[string]bool{}
	for i := range mems {
		m := &mems[i]
		require.False(t, ids[m.ID], "duplicate id %s", m.ID)
		ids[m.ID] = true
		require.Len(t, m.ID, 26)
		require.Truef(t, strings.HasPrefix(m.Namespace, "_"+m.MemoryType+"/"), "%s in %s", m.MemoryType, m.Namespace)
		if nsByType[m.MemoryType] == nil {
			nsByType[m.MemoryType] = map[string]bool{}
		}
		nsByType[m.MemoryType][m.Namespace] = true

		require.NotEmpty(t, m.Title)
		require.NotEmpty(t, m.Content)
		require.NotEmpty(t, m.Summary)
		require.NotEmpty(t, m.Entities)
		require.Contains(t, []string{"active", "archived"}, m.Status)
		require.True(t, len(m.Tags) >= 1 && len(m.Tags) <= 4, "tags %v", m.Tags)
		require.Len(t, slices.Compact(slices.Sorted(slices.Values(m.Tags))), len(m.Tags), "tags unique")

		created, err := time.Parse(time.RFC3339, m.Created)
		require.NoError(t, err)
		modified, err := time.Parse(time.RFC3339, m.Modified)
		require.NoError(t, err)
		require.False(t, modified.Before(created), "modified before created")
		require.Equal(t, m.Created, m.Temporal.ValidFrom)

		c := m.Provenance.Confidence
		require.True(t, c >= 0 && c <= 1, "confidence %v", c)
		require.Equal(t, math.Round(c*100)/100, c, "two decimals")
		require.Equal(t, "exponential", m.Temporal.Decay.Model)
		for _, r := range m.Relationships {
			require.True(t, ids[r.Target], "relationship target %s must precede it", r.Target)
		}
	}
	require.Equal(t, []string{"episodic", "procedural", "semantic"}, slices.Sorted(maps.Keys(nsByType)))
	for typ, set := range nsByType {
		assert.GreaterOrEqual(t, len(set), 3, "namespaces for %s", typ)
	}
}

func TestRecallRanking(t *testing.T) {
	mems := Generate(3000, 11)
	s := New(mems)
	require.Equal(t, 3000, s.Len())

	hits := s.Recall("caching strategy", "", 25)
	require.Len(t, hits, 25)
	assert.Equal(t, 1.0, hits[0].Score)
	for i, h := range hits {
		require.NotNil(t, h.Memory)
		require.True(t, h.Score >= 0 && h.Score <= 1, "score %v", h.Score)
		if i > 0 {
			require.LessOrEqual(t, h.Score, hits[i-1].Score, "sorted desc")
		}
	}
	assert.Equal(t, hits, s.Recall("caching strategy", "", 25), "deterministic")

	for _, kw := range []string{"caching", "failover", "kafka", "postmortem", "pagination"} {
		inTitle := 0
		for i := range mems {
			if slices.Contains(tokens(mems[i].Title), kw) {
				inTitle++
			}
		}
		require.Positive(t, inTitle, kw)
		require.Less(t, inTitle, len(mems)/4, "%s should select a subset", kw)
		hits := s.Recall(kw, "", inTitle)
		for _, h := range hits {
			require.Contains(t, tokens(h.Memory.Title), kw, "%q: title hits must rank first, got %q", kw, h.Memory.Title)
		}
	}
}

func TestRecallLimitsAndFilter(t *testing.T) {
	s := New(Generate(1500, 5))

	hits := s.Recall("database replicas", "_episodic", 40)
	require.Len(t, hits, 40)
	for _, h := range hits {
		require.True(t, strings.HasPrefix(h.Memory.Namespace, "_episodic"))
	}

	_, total := s.List("_procedural/runbooks", 0, 0)
	require.Positive(t, total)
	all := s.Recall("zzzz-no-such-term", "_procedural/runbooks", 0)
	require.Len(t, all, total, "limit <= 0 returns every match")
	require.Len(t, s.Recall("x", "_procedural/runbooks", total+10), total)
	for i, h := range all {
		require.Zero(t, h.Score)
		if i > 0 {
			prev := all[i-1].Memory
			require.True(t, prev.Modified > h.Memory.Modified ||
				(prev.Modified == h.Memory.Modified && prev.ID < h.Memory.ID), "zero scores fall back to recency")
		}
	}

	empty := s.Recall("", "", 10)
	require.Len(t, empty, 10)
	list := s.Recall("   ", "", 0)
	require.Len(t, list, 1500)
	assert.Equal(t, empty, list[:10])

	assert.Empty(t, s.Recall("caching", "_nope", 10))
	assert.Len(t, s.Recall("caching", "", -5), 1500)
	assert.Empty(t, New(nil).Recall("caching", "", 10))
}

func TestRecallConcurrent(t *testing.T) {
	s := New(Generate(2000, 9))
	want := s.Recall("kafka consumer lag", "_semantic", 15)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				assert.Equal(t, want, s.Recall("kafka consumer lag", "_semantic", 15))
			}
		})
	}
	wg.Wait()
}

func TestList(t *testing.T) {
	s := New(Generate(1000, 21))
	all, total := s.List("", 0, 0)
	require.Equal(t, 1000, total)
	require.Len(t, all, 1000)
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		require.True(t, a.Created > b.Created || (a.Created == b.Created && a.ID <= b.ID), "created desc then id")
	}

	sem, semTotal := s.List("_semantic", 0, -1)
	require.Len(t, sem, semTotal)
	var paged []*Memory
	for off := 0; off < semTotal; off += 7 {
		page, tot := s.List("_semantic", off, 7)
		require.Equal(t, semTotal, tot)
		require.LessOrEqual(t, len(page), 7)
		paged = append(paged, page...)
	}
	require.Equal(t, sem, paged)
	for _, m := range sem {
		require.Equal(t, "semantic", m.MemoryType)
	}

	page, tot := s.List("", 995, 10)
	assert.Len(t, page, 5)
	assert.Equal(t, 1000, tot)
	page, tot = s.List("", 5000, 10)
	assert.Empty(t, page)
	assert.Equal(t, 1000, tot)
	page, _ = s.List("", -4, 3)
	assert.Equal(t, all[:3], page)
	page, tot = s.List("_missing", 0, 10)
	assert.Empty(t, page)
	assert.Zero(t, tot)
}

func keySet(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &obj))
	return slices.Sorted(maps.Keys(obj))
}

func TestProject(t *testing.T) {
	m := &Memory{ID: "m1", MemoryType: "semantic", Namespace: "_semantic/x", Content: "c",
		Provenance: Provenance{Confidence: 0.5}}
	light := []string{"created", "id", "memory_type", "modified", "namespace", "status", "tags", "title"}
	medium := slices.Sorted(slices.Values(append(slices.Clone(light), "confidence", "content", "summary")))
	full := slices.Sorted(slices.Values(append(slices.Clone(light), "content", "summary", "provenance", "temporal")))

	for detail, want := range map[string][]string{"light": light, "medium": medium, "full": full} {
		v, err := Project(m, detail)
		require.NoError(t, err)
		assert.Equal(t, want, keySet(t, v), detail)
	}

	g := Generate(1, 1)[0]
	v, err := Project(&g, "full")
	require.NoError(t, err)
	assert.Same(t, &g, v)
	assert.NotContains(t, keySet(t, v), "confidence")
	assert.Subset(t, keySet(t, v), []string{"entities", "provenance", "temporal"})

	v, err = Project(m, "medium")
	require.NoError(t, err)
	b, _ := json.Marshal(v)
	assert.True(t, strings.HasPrefix(string(b), `{"id":"m1","memory_type":"semantic","title":"","namespace":"_semantic/x","tags":[],`), string(b))
	assert.Contains(t, string(b), `"confidence":0.5`)

	_, err = Project(m, "huge")
	require.ErrorContains(t, err, `"huge"`)
	_, err = Project(nil, "light")
	require.Error(t, err)
}

func TestReadJSONL(t *testing.T) {
	mems := Generate(300, 13)
	var buf bytes.Buffer
	buf.WriteString(`{"type":"lro_header","version":1,"count":300}` + "\n\n")
	enc := json.NewEncoder(&buf)
	for i := range mems {
		require.NoError(t, enc.Encode(&mems[i]))
		if i == 10 {
			buf.WriteString("   \n")
		}
	}
	got, err := ReadJSONL(&buf)
	require.NoError(t, err)
	require.Equal(t, mems, got)

	got, err = ReadJSONL(strings.NewReader(`{"id":"a","title":"no newline at end"}`))
	require.NoError(t, err)
	require.Len(t, got, 1)

	_, err = ReadJSONL(strings.NewReader("{\"id\":\"a\"}\n\n{\"id\": 12}\n"))
	require.ErrorContains(t, err, "line 3")
	_, err = ReadJSONL(strings.NewReader("{\"id\":\"a\"}\n[1,2]\n"))
	require.ErrorContains(t, err, "line 2")
	_, err = ReadJSONL(strings.NewReader("{\"title\":\"no id\"}\n"))
	require.ErrorContains(t, err, "line 1")

	got, err = ReadJSONL(strings.NewReader(""))
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestFormatContext(t *testing.T) {
	s := New(Generate(500, 17))
	hits := s.Recall("deployment rollbacks", "", 20)

	unlimited := FormatContext(hits, "medium", 0)
	require.Equal(t, unlimited, FormatContext(hits, "medium", 0), "deterministic")
	for _, h := range hits {
		require.Contains(t, unlimited, "## "+h.Memory.Title+"\n")
		require.Contains(t, unlimited, h.Memory.Namespace)
		require.Contains(t, unlimited, h.Memory.Content)
	}

	light := FormatContext(hits, "light", 0)
	assert.NotContains(t, light, hits[0].Memory.Content)
	assert.Contains(t, light, hits[0].Memory.Title)
	full := FormatContext(hits, "full", 0)
	assert.Greater(t, len(full), len(unlimited))
	assert.Contains(t, full, hits[0].Memory.Summary)

	for _, budget := range []int{1, 40, 150, 400} {
		out := FormatContext(hits, "medium", budget)
		require.LessOrEqual(t, estimateTokens(len([]rune(out))), budget)
		sections := strings.Count(out, "## ")
		require.Less(t, sections, len(hits), "budget %d should cut", budget)
		// Whole memories only, in rank order: the output is a prefix of the
		// unlimited rendering ending at a section boundary.
		require.True(t, strings.HasPrefix(unlimited, out))
		if sections > 0 {
			require.Equal(t, "## "+hits[sections].Memory.Title, strings.SplitN(unlimited[len(out)+1:], "\n", 2)[0])
		}
	}
	assert.Empty(t, FormatContext(hits, "medium", 1))
	assert.Empty(t, FormatContext(nil, "medium", 100))
	assert.Equal(t, unlimited, FormatContext(hits, "bogus", 0), "unknown detail renders as medium")
}

func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Generate(10_000, 1)
	}
}

func BenchmarkRecall(b *testing.B) {
	s := New(Generate(100_000, 1))
	for _, bc := range []struct{ name, query, ns string }{
		{"keywords", "database failover latency", ""},
		{"namespace", "caching session tokens", "_semantic"},
		{"empty", "", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(s.Recall(bc.query, bc.ns, 20)) != 20 {
					b.Fatal("short result")
				}
			}
		})
	}
}
