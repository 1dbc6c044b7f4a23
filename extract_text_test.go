package lro_test

import (
	"os/exec"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractGrepAndLines: lro_extract's grep and lines modes print what
// grep -n and sed -n print on the same offloaded file, on both hosts
// through the go-sdk client and the TypeScript client.
func TestExtractGrepAndLines(t *testing.T) {
	for _, tool := range []string{"grep", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	ts := e2e.TSClient(t)
	for _, h := range confHosts[:2] {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, genericPolicies...)
			url := h.serve(t, off, true)
			call := confClients[0].connect(t, url, nil)
			logs := call("logs", nil)
			d := checkOffloaded(t, confEnv{off: off}, logs, "logs", "", 2000, false)
			shell := func(name string, args ...string) string {
				out, err := exec.Command(name, append(args, d.FilePath)...).Output()
				require.NoError(t, err)
				return string(out)
			}
			cases := []struct {
				args map[string]any
				want string
			}{
				{map[string]any{"grep": `id=1[0-9]"`, "context": 1}, shell("grep", "-n", "-E", "-C1", `id=1[0-9]"`)},
				{map[string]any{"grep": `LEVEL=INFO.*ID=7"`, "ignore_case": true}, shell("grep", "-n", "-E", "-i", `LEVEL=INFO.*ID=7"`)},
				{map[string]any{"lines": "5-9"}, shell("sed", "-n", "5,9p")},
				{map[string]any{"lines": "1"}, shell("sed", "-n", "1p")},
			}
			var steps []e2e.Step
			for _, c := range cases {
				c.args["file_path"] = d.FilePath
				got := call(lro.ExtractToolName, c.args)
				require.False(t, got.IsError, "%v: %v", c.args, got.Texts)
				assert.Equal(t, c.want, got.Texts[0], "%v", c.args)
				steps = append(steps, e2e.CallTool(lro.ExtractToolName, c.args))
			}
			for i, r := range tsResults(t, ts.RunHTTP(t, url, "grep-ts", steps)) {
				assert.Equal(t, cases[i].want, r.Texts[0], "TypeScript client: %v", cases[i].args)
			}

			bad := call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "grep": "x", "recipe": 1})
			assert.True(t, bad.IsError)
			assert.Contains(t, bad.Texts[0], "exactly one of recipe")
			none := call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "grep": "no such text"})
			assert.Contains(t, none.Texts[0], "no line matches; 2001 lines searched")
		})
	}
}
