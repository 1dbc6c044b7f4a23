package lro_test

import (
	"encoding/json"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConformanceTypeScript runs the suite's main cases on both hosts
// through the official TypeScript SDK client, which validates structured
// content against output schemas. It skips without node and the client's
// node_modules (CI installs both).
func TestConformanceTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	for _, h := range confHosts {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, genericPolicies...)
			url := h.serve(t, off, true)
			plainURL := h.serve(t, nil, false)
			var cases []confCase
			var steps []e2e.Step
			for _, c := range confCases {
				if c.config == nil && c.options == nil && c.proxy == nil {
					cases = append(cases, c)
					steps = append(steps, e2e.CallTool(c.tool, c.args))
				}
			}
			got := tsResults(t, ts.RunHTTP(t, url, "conformance-ts", steps))
			plain := tsResults(t, ts.RunHTTP(t, plainURL, "conformance-ts", steps))
			var d lro.OffloadResponse
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					env := confEnv{off: off, tool: c.tool, args: c.args, plain: func(string, map[string]any) confResult { return plain[i] }}
					if c.extract {
						d = checkOffloaded(t, env, got[i], "recall", lro.DetailFull, 200, true)
						return // lro_extract is followed below
					}
					c.check(t, env, got[i])
				})
			}
			require.NotEmpty(t, d.FilePath)
			ex := tsResults(t, ts.RunHTTP(t, url, "conformance-ts", []e2e.Step{
				e2e.CallTool(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "recipe": 6}),
				e2e.CallTool(lro.ExtractToolName, map[string]any{"file_path": "/etc/passwd", "recipe": 1}),
			}))
			assert.False(t, ex[0].IsError)
			assert.Contains(t, ex[0].Texts[0], `"count"`, "recipe 6 counts by namespace")
			assert.True(t, ex[1].IsError)
			assert.Contains(t, ex[1].Texts[0], "not in the offload directory")
		})
	}
}

// tsResults decodes the TypeScript client's results; every step must have
// succeeded on the client's side (a result that fails the client's own
// validation is an error there).
func tsResults(t *testing.T, steps []e2e.StepResult) []confResult {
	t.Helper()
	out := make([]confResult, len(steps))
	for i, s := range steps {
		require.True(t, s.OK, "step %d: %s", i, s.Error)
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type, Text, URI, Name, MIMEType string
				Size                            int64
			}
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(s.Result, &r))
		out[i] = confResult{IsError: r.IsError, Structured: r.StructuredContent}
		for _, c := range r.Content {
			switch c.Type {
			case "text":
				out[i].Texts = append(out[i].Texts, c.Text)
			case "resource_link":
				out[i].Links = append(out[i].Links, confLink{c.URI, c.Name, c.MIMEType, c.Size})
			default:
				t.Fatalf("step %d: unexpected content type %q", i, c.Type)
			}
		}
	}
	return out
}
