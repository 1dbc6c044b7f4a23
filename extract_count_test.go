package lro_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/require"
)

// TestExtractCountIsExactEveryTime: the number of results lro_extract
// states is the true one, the same call after call, and jq's (issue 32.1:
// on 20,000 memories, six runs of this select said "at least" 6,755 to
// 9,783 of 18,359).
func TestExtractCountIsExactEveryTime(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("needs the jq binary")
	}
	// A deadline no busy machine reaches: the count must be exact.
	o := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{Timeout: time.Minute}))
	o.Host().ExtractToolDefinition() // serves lro_extract: workers start
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailLight, Records: memories(t, 20000, lro.DetailLight)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	path := out.Response.FilePath

	const query = `select(.title|test("a";"i"))`
	want := len(jqLines(t, path, lro.Recipe{Filter: query}, nil))
	require.Greater(t, want, 1000, "the select leaves most results out")
	for i := range 6 {
		text, err := o.Extract(context.Background(), map[string]any{"file_path": path, "query": query})
		require.NoError(t, err)
		note := text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:]
		m := noteRE.FindStringSubmatch(note)
		require.NotNil(t, m, "call %d: %s", i, note)
		shown, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		require.Equal(t, want, total, "call %d: %s", i, note)
		require.Contains(t, note, "("+strconv.Itoa(want-shown)+" left out)")
	}
}
