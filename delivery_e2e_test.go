package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byClientName is a delivery choice such as a server would make: compact
// pointers for one client, inline truncation for another that can follow
// nothing, the configured default for the rest.
func byClientName(r lro.DeliveryRequest) lro.DeliveryChoice {
	switch r.Client.Name {
	case "compact-client":
		return lro.DeliveryChoice{Mode: lro.DeliveryCompact}
	case "web-client":
		return lro.DeliveryChoice{Mode: lro.DeliveryTruncate}
	}
	return lro.DeliveryChoice{}
}

var recall200 = map[string]any{"query": "cache", "limit": 200}

// checkDelivered checks a recall of 200 memories delivered as mode.
func checkDelivered(t *testing.T, mode lro.Delivery, r confResult) {
	t.Helper()
	require.False(t, r.IsError, "%v", r.Texts)
	require.NotEmpty(t, r.Texts)
	switch mode {
	case lro.DeliveryDescriptor:
		var d lro.OffloadResponse
		require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d))
		assert.Len(t, d.JQRecipes, 10)
		assert.Equal(t, 200, d.Summary.Count)
		assert.Len(t, r.Texts, 1, "no preview by default")
	case lro.DeliveryCompact:
		var c lro.CompactResponse
		dec := json.NewDecoder(strings.NewReader(r.Texts[0]))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&c), r.Texts[0])
		assert.Equal(t, 200, c.Summary.Count)
		_, lines := readJSONL(t, mustRead(t, c.FilePath))
		assert.Len(t, lines, 200)
		require.Len(t, r.Texts, 2, "the pointer and its preview")
		assert.Contains(t, r.Texts[1], string(lines[0]), "the preview shows the file's first record")
	case lro.DeliveryTruncate:
		var page struct{ Results []json.RawMessage }
		require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &page), r.Texts[0])
		assert.NotEmpty(t, page.Results)
		assert.Less(t, len(page.Results), 200)
		assert.Contains(t, r.Texts[len(r.Texts)-1], "of 200 records")
		assert.Empty(t, r.Links, "no file, no link")
	}
	if r.Structured != nil && mode != lro.DeliveryTruncate {
		assert.JSONEq(t, r.Texts[0], string(r.Structured), "the same pointer in both representations")
	}
}

// TestDeliveryByClientName runs each delivery mode, chosen by the client's
// name, on both hosts through both Go clients.
func TestDeliveryByClientName(t *testing.T) {
	for _, h := range confHosts[:2] {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, lro.WithDelivery(byClientName))
			url := h.serve(t, off, true)
			for _, c := range confClients {
				for name, mode := range map[string]lro.Delivery{"compact-client": lro.DeliveryCompact, "web-client": lro.DeliveryTruncate, "claude": lro.DeliveryDescriptor} {
					t.Run(c.name+"/"+name, func(t *testing.T) {
						checkDelivered(t, mode, c.connectAs(t, url, name, nil)("recall_memories", recall200))
					})
				}
			}
		})
	}
}

// TestDeliveryByConfig runs each mode set by Config.Delivery.
func TestDeliveryByConfig(t *testing.T) {
	for _, mode := range []lro.Delivery{lro.DeliveryCompact, lro.DeliveryTruncate} {
		t.Run(string(mode), func(t *testing.T) {
			for _, h := range confHosts[:2] {
				off := newOffloader(t, func(c *lro.Config) { c.Delivery = mode })
				checkDelivered(t, mode, confClients[0].connect(t, h.serve(t, off, true), nil)("recall_memories", recall200))
			}
		})
	}
}

// TestSessionBudgetEndToEnd turns the N-th small call of a session into an
// offload, on both hosts through both Go clients, while another session
// keeps its own budget. The go-sdk client speaks protocol 2026-07-28 to
// mcp-go, which serves it statelessly: without a session there is no
// budget, and every call stays inline.
func TestSessionBudgetEndToEnd(t *testing.T) {
	const budget = 3000
	small := map[string]any{"query": "cache", "limit": 12}
	for _, h := range confHosts[:2] {
		for _, c := range confClients {
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				off := newOffloader(t, func(c *lro.Config) { c.SessionBudgetTokens = budget })
				url := h.serve(t, off, true)
				call := c.connectAs(t, url, "budgeted", nil)
				first := call("recall_memories", small)
				require.False(t, first.IsError)
				tokens := len(first.Texts[0]) / 4
				require.Greater(t, tokens, 650, "a result larger than a descriptor")
				inline := budget / tokens
				if h.name == "mcp-go" && c.name == "go-sdk client" {
					inline = 2 * inline // stateless: no session, no budget
				}
				for i := 2; i <= inline; i++ {
					r := call("recall_memories", small)
					assert.Equal(t, first.Texts[0], r.Texts[0], "call %d is within the budget", i)
				}
				if inline > budget/tokens {
					return
				}
				var d lro.OffloadResponse
				r := call("recall_memories", small)
				require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d), "call %d passes the budget: %.200s", inline+1, r.Texts[0])
				assert.True(t, d.Offloaded)
				assert.Equal(t, 12, d.Summary.Count)

				other := c.connectAs(t, url, "budgeted", nil)("recall_memories", small)
				assert.Equal(t, first.Texts[0], other.Texts[0], "a new session starts with the whole budget")
			})
		}
	}
}

// TestDeliveryTypeScript chooses the mode by the TypeScript client's name,
// and counts its session's budget; the client validates the structured
// pointer against the widened output schema.
func TestDeliveryTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	for _, h := range confHosts[:2] {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, append(memserver.Policies(), lro.WithDelivery(byClientName))...)
			url := h.serve(t, off, true)
			for name, mode := range map[string]lro.Delivery{"compact-client": lro.DeliveryCompact, "web-client": lro.DeliveryTruncate, "claude": lro.DeliveryDescriptor} {
				steps := []e2e.Step{e2e.CallTool("recall_memories", recall200), e2e.CallTool("export_memories", map[string]any{"limit": 200})}
				got := tsResults(t, ts.RunHTTP(t, url, name, steps))
				checkDelivered(t, mode, got[0])
				if mode != lro.DeliveryTruncate {
					require.NotNil(t, got[1].Structured, "export_memories declares an output schema")
				}
			}

			budgeted := newOffloader(t, func(c *lro.Config) { c.SessionBudgetTokens = 3000 })
			small := e2e.CallTool("recall_memories", map[string]any{"query": "cache", "limit": 12})
			got := tsResults(t, ts.RunHTTP(t, h.serve(t, budgeted, false), "budgeted", []e2e.Step{small, small, small, small, small, small}))
			tokens := len(got[0].Texts[0]) / 4
			n := 3000/tokens + 1
			require.Less(t, n, len(got))
			for i := range n - 1 {
				assert.Equal(t, got[0].Texts[0], got[i].Texts[0], "call %d is within the budget", i+1)
			}
			assert.Contains(t, got[n-1].Texts[0], `"offloaded":true`, "call %d passes the budget", n)
		})
	}
}

// TestResourceLinkFollowed: an offloaded result carries a resource link to
// its file, which the same client reads back exactly through
// resources/read, by lines, and, past the read limit, gets an error that
// points to line ranges and lro_extract; on both hosts through the go-sdk
// client and the TypeScript client.
func TestResourceLinkFollowed(t *testing.T) {
	ts := e2e.TSClient(t)
	for _, h := range confHosts[:2] {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, lro.WithResourceMaxBytes(100_000))
			url := h.serve(t, off, true)
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "linker", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
			require.NoError(t, err)
			defer cs.Close()
			link := func(tool string, args map[string]any) (lro.OffloadResponse, *mcp.ResourceLink) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				require.NoError(t, err)
				require.Len(t, res.Content, 2, "the descriptor and the link")
				var d lro.OffloadResponse
				require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &d))
				l, ok := res.Content[1].(*mcp.ResourceLink)
				require.True(t, ok, "%T", res.Content[1])
				return d, l
			}

			small, sl := link("recall_memories", map[string]any{"query": "cache", "limit": 60})
			data := mustRead(t, small.FilePath)
			assert.Equal(t, "lro://files/"+filepath.Base(small.FilePath), sl.URI)
			assert.Equal(t, "application/jsonl", sl.MIMEType)
			assert.Equal(t, int64(len(data)), *sl.Size)
			got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: sl.URI})
			require.NoError(t, err)
			assert.Equal(t, string(data), got.Contents[0].Text, "exactly the file")

			large, ll := link("recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"})
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ll.URI})
			require.Error(t, err, "over the read limit")
			assert.Contains(t, err.Error(), "/lines/")
			assert.Contains(t, err.Error(), "lro_extract")
			lines, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ll.URI + "/lines/3-5"})
			require.NoError(t, err)
			file := strings.SplitAfter(string(mustRead(t, large.FilePath)), "\n")
			assert.Equal(t, strings.Join(file[2:5], ""), lines.Contents[0].Text, "as sed -n 3,5p prints them")

			steps := []e2e.Step{e2e.CallTool("recall_memories", map[string]any{"query": "cache", "limit": 60}), e2e.ReadResource(sl.URI), e2e.ReadResource(ll.URI + "/lines/3-5")}
			tsGot := ts.RunHTTP(t, url, "linker-ts", steps)
			r := tsResults(t, tsGot[:1])[0]
			require.Len(t, r.Links, 1, "the TypeScript client sees the link")
			assert.True(t, strings.HasPrefix(r.Links[0].URI, "lro://files/atlatl-recall-"))
			require.True(t, tsGot[1].OK, tsGot[1].Error)
			assert.Contains(t, string(tsGot[1].Result), `\"type\":\"lro_header\"`, "the file, header first")
			require.True(t, tsGot[2].OK, tsGot[2].Error)
			var rr struct{ Contents []struct{ Text string } }
			require.NoError(t, json.Unmarshal(tsGot[2].Result, &rr))
			assert.Equal(t, strings.Join(file[2:5], ""), rr.Contents[0].Text)
		})
	}
}

// TestTruncateFitsThreshold checks that a truncated result, the records
// and the notice that rides with them, fits the threshold as a model
// receives it: issue 27 found list_memories at 1,605 tokens against
// 1,600, its records alone fitting (50 light memories of seed 3 are that
// case). The records of each call run up to the threshold, so a notice
// left out of the budget shows on most of them; at 150 tokens no full
// memory fits, and the first one goes out cut, beside the notice. A
// result truncated because its file could not be written (here, over
// the directory's quota) keeps to the same budget with its warning.
func TestTruncateFitsThreshold(t *testing.T) {
	t.Parallel()
	var est lro.HeuristicEstimator
	for _, tc := range []struct {
		corpus    int
		seed      uint64
		threshold int
		failed    bool // delivered as a descriptor, the write failing
	}{{50, 3, 1600, false}, {200, 1, 1600, false}, {1000, 2, 1600, false}, {500, 7, 3000, false}, {500, 7, 300, false}, {500, 7, 150, false},
		{50, 3, 1600, true}, {200, 1, 1600, true}, {500, 7, 150, true}} {
		t.Run(fmt.Sprintf("corpus=%d/seed=%d/threshold=%d/failed=%v", tc.corpus, tc.seed, tc.threshold, tc.failed), func(t *testing.T) {
			off := newOffloader(t, func(c *lro.Config) {
				c.Delivery, c.ThresholdTokens = lro.DeliveryTruncate, tc.threshold
				if tc.failed {
					c.Delivery, c.MaxDirBytes = lro.DeliveryDescriptor, 2000 // no file fits
				}
			}, memserver.Policies()...)
			c := connect(t, memserver.New(memstore.New(memstore.Generate(tc.corpus, tc.seed)), off))
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"list_memories", map[string]any{"detail": "light"}},
				{"list_memories", map[string]any{"detail": "full", "namespace": "_semantic"}},
				{"recall_memories", map[string]any{"query": "cache", "limit": 500, "detail": "medium"}},
				{"memory_graph", map[string]any{"limit": 500}}, // two sections
			} {
				res := callTool(t, c, call.tool, call.args)
				require.False(t, res.IsError, textOf(t, res, 0))
				tokens, all := 0, ""
				for i := range res.Content {
					tokens += est.EstimateTokens([]byte(textOf(t, res, i)))
					all += textOf(t, res, i)
				}
				require.Contains(t, all, "lro: ", "%s %v was truncated", call.tool, call.args)
				assert.LessOrEqual(t, tokens, tc.threshold, "%s %v: the records and the notice", call.tool, call.args)
			}
		})
	}
}
