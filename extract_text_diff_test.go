package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitDiff is a git diff of n lines: hunks, added tests, what a JSON
// string escapes (quotes, backslashes, tabs, "\n" in Go source),
// non-ASCII, and a blank line now and then.
func gitDiff(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i%400 == 0:
			b.WriteString("\n")
		case i%100 == 1:
			fmt.Fprintf(&b, "diff --git a/pkg/f%d.go b/pkg/f%d.go\n", i, i)
		case i%100 == 2:
			fmt.Fprintf(&b, "@@ -%d,7 +%d,9 @@ func helper() {\n", i, i+2)
		case i%9 == 0:
			fmt.Fprintf(&b, "+func Test%d(t *testing.T) {\n", i)
		case i%9 == 1:
			fmt.Fprintf(&b, "-\tfmt.Printf(\"old %%d\\n\", %d) // où\n", i)
		default:
			fmt.Fprintf(&b, " \tpath := `C:\\temp\\%d` // func Test in a comment\n", i)
		}
	}
	return b.String()
}

// TestExtractTextOffloadIsText reproduces issue 38's git diff offloaded
// as text: grep `^\+func Test` answered "no line matches; 5001 lines
// searched" where grep -c on the diff finds 544, because it matched the
// file's JSON lines; lines 1-5 began with the header, one off from the
// descriptor's recipe "Print lines $from to $to". Now grep and lines read
// the text, and the recipe, run by lro_extract or as the descriptor's
// shell command, prints what they and sed -n print.
func TestExtractTextOffloadIsText(t *testing.T) {
	diff := gitDiff(5000)
	text := filepath.Join(t.TempDir(), "diff.txt")
	require.NoError(t, os.WriteFile(text, []byte(diff), 0o600))
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, append(args, text)...).Output()
		require.NoError(t, err, "%s %q", name, args)
		return string(out)
	}
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	res := serveText(t, o, host.Call{Tool: "git_diff"}, diff)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &d))
	require.True(t, d.Offloaded)
	ask := func(args map[string]any) string {
		args["file_path"] = d.FilePath
		out, err := o.Extract(context.Background(), args)
		require.NoError(t, err, "%v", args)
		return out
	}

	want := strings.TrimSpace(run("grep", "-c", "-E", `^\+func Test`))
	got := ask(map[string]any{"grep": `^\+func Test`})
	m := regexp.MustCompile(`showing (\d+) of (\d+) matching lines`).FindStringSubmatch(got)
	require.NotNil(t, m, "%.300s", got[max(0, len(got)-300):])
	assert.Equal(t, want, m[2], "grep -c on the diff")
	shown, _, _ := strings.Cut(got, "[lro")
	assert.True(t, strings.HasPrefix(run("grep", "-n", "-E", `^\+func Test`), shown), "the matches shown are grep -n's first")
	t.Logf(`grep '^\+func Test': %s of %s matching lines shown; grep -c: %s`, m[1], m[2], want)

	for _, c := range []struct{ pattern, grep string }{
		{`^@@ .* @@ func helper\(\) \{$`, `^@@ .* @@ func helper\(\) \{$`},
		{`C:\\temp\\1[0-9]\b`, `C:\\temp\\1[0-9]\b`},
		{`^$`, `^$`},
		{`"old %d\\n", 1[0-9]\)`, `"old %d\\n", 1[0-9]\)`},
	} {
		assert.Equal(t, run("grep", "-n", "-E", c.grep), ask(map[string]any{"grep": c.pattern}), "grep %s", c.pattern)
	}

	// lines, and the recipe the descriptor gives for them.
	recipe := 0
	for i, r := range d.JQRecipes {
		if r.Description == "Print lines FROM to TO" {
			recipe = i + 1
		}
	}
	require.NotZero(t, recipe, "the descriptor's recipes: %v", d.JQRecipes)
	for _, r := range [][2]int{{1, 5}, {398, 402}, {4990, 5010}} {
		sed := run("sed", "-n", fmt.Sprintf("%d,%dp", r[0], r[1]))
		assert.Equal(t, sed, ask(map[string]any{"lines": fmt.Sprintf("%d-%d", r[0], r[1])}), "lines %v", r)
		assert.Equal(t, sed, ask(map[string]any{"recipe": recipe, "params": map[string]any{"from": fmt.Sprint(r[0]), "to": fmt.Sprint(r[1])}}), "recipe %d %v", recipe, r)
	}
	testenv.JQ(t)
	command := d.JQRecipes[recipe-1].Command
	require.Contains(t, command, `("1" | tonumber):("50" | tonumber)`)
	shell, err := exec.Command("bash", "-c", command).Output()
	require.NoError(t, err, command)
	assert.Equal(t, run("sed", "-n", "1,50p"), string(shell), "the descriptor's shell recipe: %s", command)
	assert.Equal(t, string(shell), ask(map[string]any{"lines": "1-50"}))
}
