package lro_test

import (
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/mcplro/lro/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyRestoresStructuredContent: a remote on either SDK sends the
// proxy the JSON of a result once, and the proxy's clients get the result
// the remote's own clients get: the text and the structured content, which
// the official TypeScript client checks against the tool's output schema.
// On the official SDK the typed tool's text keeps its fields' order while
// its structured content is re-encoded with sorted keys: the two differ, so
// that result crosses whole (TestStructuredOnceOnTheWire checks what is
// left out).
func TestProxyRestoresStructuredContent(t *testing.T) {
	small := []struct {
		tool string
		args map[string]any
	}{
		{"recall_memories", map[string]any{"query": "cache", "limit": 3}},
		{"export_memories", map[string]any{"limit": 2}},
	}
	for _, h := range confHosts[:2] {
		t.Run(h.name, func(t *testing.T) {
			remote := h.serve(t, newOffloader(t, nil), false)
			p, err := proxy.New(newOffloader(t, nil), proxy.Config{Remote: remote})
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			viaProxy := serveHTTP(t, server.NewStreamableHTTPServer(p.Server()))
			for _, c := range confClients {
				direct, proxied := c.connect(t, h.serve(t, nil, false), nil), c.connect(t, viaProxy, nil)
				for _, s := range small {
					want := direct(s.tool, s.args)
					require.NotNil(t, want.Structured, s.tool)
					assert.Equal(t, want, proxied(s.tool, s.args), "%s through the proxy, %s", s.tool, c.name)
				}
			}

			ts := e2e.TSClient(t)
			steps := []e2e.Step{e2e.ListTools()}
			for _, s := range small {
				steps = append(steps, e2e.CallTool(s.tool, s.args))
			}
			got := tsResults(t, ts.RunHTTP(t, viaProxy, "restored-ts", steps)[1:])
			for i, r := range got {
				assert.False(t, r.IsError, small[i].tool)
				require.NotNil(t, r.Structured, small[i].tool)
				assert.JSONEq(t, string(r.Structured), r.Texts[0], small[i].tool)
			}
		})
	}
}
