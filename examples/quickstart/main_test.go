package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/e2e"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstart runs the README's demo and checks what it prints.
func TestQuickstart(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	assert.Contains(t, s, `"offloaded": true`)
	assert.Contains(t, s, `"count": 500`)
	assert.Contains(t, s, `"extra": {
      "service": "checkout"
    }`, "the result's own count is the summary's, not repeated in extra")
	assert.Contains(t, s, `"description": "Count by level"`)
	// Issue 39.8: a description names a parameter as the command spells
	// it, KEYWORD, never $keyword, which no command shows.
	assert.Contains(t, s, `"description": "Search message for KEYWORD"`)
	// Its command searches, as written, a word the records hold (issue 39:
	// every recipe prints something as written), which KEYWORD replaces.
	assert.Regexp(t, `"description": "Search message for KEYWORD",\s+"command": "[^"]*test\(\\"[a-z0-9]+\\"`, s)
	assert.NotRegexp(t, `"description": "[^"]*\$`, s)
	assert.Regexp(t, `lro_extract\(file_path, recipe=\d+\):\n  \[\{"level":"ERROR","count":18\},\{"level":"INFO","count":413\},\{"level":"WARN","count":69\}\]`, s)
	assert.Regexp(t, `\n  \{"time":"2026-01-01T09:00:00Z","message":"payment declined for order 10000: gateway timeout after 3 s"\}\n`, s,
		"lro_extract ran the query on the file, keys in the query's order")

	inline := regexp.MustCompile(`inline result:\s+(\d+) bytes`).FindStringSubmatch(s)
	desc := regexp.MustCompile(`descriptor:\s+(\d+) bytes`).FindStringSubmatch(s)
	require.NotNil(t, inline)
	require.NotNil(t, desc)
	in, _ := strconv.Atoi(inline[1])
	d, _ := strconv.Atoi(desc[1])
	assert.Greater(t, in, 10*d, "the descriptor is a small fraction of the inline result")
	assert.NotContains(t, s, "error")
	assert.NotContains(t, s, `\u003e`)
}

// TestQuickstartLeavesNothingBehind: the demo writes its file under the
// temporary directory, and removes it and its own directory before it
// returns.
func TestQuickstartLeavesNothingBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))

	m := regexp.MustCompile(`"file_path": "([^"]+)"`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the descriptor names its file")
	path := m[1]
	assert.True(t, strings.HasPrefix(path, tmp+string(filepath.Separator)), "%s is under %s", path, tmp)
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the offloaded file is gone")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing is left in the temporary directory")
	assert.Contains(t, out.String(), "Removed "+filepath.Dir(path))
}

// TestStdioHonoursTheEnvironment: the server as the README wires it, run
// on stdio and driven by the official TypeScript client, takes the
// documented ATLATL_PROMPT__OFFLOAD__* variables (they did nothing unless
// the code called ApplyEnv), and refuses to start on a malformed one,
// naming it.
func TestStdioHonoursTheEnvironment(t *testing.T) {
	ts := e2e.TSClient(t)
	bin := filepath.Join(t.TempDir(), "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	env := []string{
		"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + dir,
		"ATLATL_PROMPT__OFFLOAD__DELIVERY=compact",
		"ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS=400",
	}
	res := ts.RunStdio(t, "env-test", bin, []string{"-stdio"}, env, []e2e.Step{
		e2e.CallTool("get_logs", map[string]any{"limit": 20}), // about 600 tokens: over 400, under 1600
	})
	require.True(t, res[0].OK, res[0].Error)
	text := string(res[0].Result)
	assert.Contains(t, text, `\"offloaded\":true`, "offloaded over the threshold of the environment")
	assert.NotContains(t, text, "jq_recipes", "the compact pointer of the environment, not the descriptor")
	assert.Contains(t, text, dir, "in the directory of the environment")

	cmd := exec.Command(bin, "-stdio")
	cmd.Env = append(os.Environ(), "ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS=16k")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a malformed variable stops the server")
	assert.Contains(t, string(out), "ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS")
}
