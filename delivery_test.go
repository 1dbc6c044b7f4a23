package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ticketsJSON returns a JSON array of n tickets, about 25 tokens each.
func ticketsJSON(n int) string {
	ts := make([]map[string]any, n)
	for i := range ts {
		ts[i] = map[string]any{"id": i + 1, "title": fmt.Sprintf("Ticket %d: the cache is cold", i+1), "status": "open"}
	}
	b, _ := json.Marshal(ts)
	return string(b)
}

// serveText runs Serve on a handler returning text, as a tool with a
// generic policy.
func serveText(t *testing.T, o *lro.Offloader, call host.Call, text string) host.Result {
	t.Helper()
	if call.Tool == "" {
		call.Tool = "tickets"
	}
	res, replaced, err := o.Host().Serve(context.Background(), call, func(context.Context) (host.Result, error) {
		return host.Result{Content: []host.Content{host.TextContent(text)}}, nil
	})
	require.NoError(t, err)
	if !replaced {
		return host.Result{Content: []host.Content{host.TextContent(text)}}
	}
	return res
}

// sixtyCharDir returns a directory whose offloaded files of operation
// have paths of 60 characters, the length the budgets are stated for.
func sixtyCharDir(operation string) string {
	name := len("atlatl-") + len(operation) + len("-01ARZ3NDEKTSV4RRFFQ69G5FAV.jsonl")
	return "/" + strings.Repeat("d", 60-name-2)
}

func TestDeliveryCompact(t *testing.T) {
	dir := sixtyCharDir("tickets")
	fsys := lrotest.NewMemFS(dir)
	o := newOffloader(t, func(c *lro.Config) { c.Delivery = lro.DeliveryCompact }, lro.WithFS(fsys), lro.WithTool("tickets", lro.ToolPolicy{Generic: true}))
	res := serveText(t, o, host.Call{}, ticketsJSON(300))

	require.Len(t, res.Content, 2, "the pointer and its preview")
	body := res.Content[0].Text
	var c lro.CompactResponse
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&c))
	assert.True(t, c.Offloaded)
	assert.Len(t, c.FilePath, 60)
	assert.Equal(t, lro.CompactSummary{Count: 300, EstimatedTokens: c.Summary.EstimatedTokens, Operation: "tickets"}, c.Summary)
	assert.Greater(t, c.Summary.EstimatedTokens, 1600)
	assert.NotContains(t, c.Guidance, "\n", "one line")
	native := serveText(t, o, host.Call{NativeExtract: true}, ticketsJSON(300)).Content[0].Text
	assert.Contains(t, native, "lro_extract")
	assert.NotContains(t, native, "recipe", "a compact pointer carries no recipes to name")
	tokens := len(body) / 4
	t.Logf("compact pointer: %d bytes, ~%d tokens: %s", len(body), tokens, body)
	assert.LessOrEqual(t, tokens, 150)
	assert.Nil(t, res.Structured, "a text result gets no structured pointer")

	preview := res.Content[1].Text
	assert.True(t, strings.HasPrefix(preview, "Preview: the first "), preview)
	assert.Contains(t, preview, `{"id":1,"status":"open","title":"Ticket 1: the cache is cold"}`)
	assert.LessOrEqual(t, len(preview)/4, lro.DefaultPreviewTokens+30)

	data, err := fsys.ReadFile(c.FilePath[len(dir)+1:])
	require.NoError(t, err)
	_, lines := readJSONL(t, data)
	assert.Len(t, lines, 300, "the file is complete")
}

func TestDeliveryDescriptorPreviewIsOptional(t *testing.T) {
	var last lro.DeliveryRequest
	o := newOffloader(t, nil, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}),
		lro.WithDelivery(func(r lro.DeliveryRequest) lro.DeliveryChoice {
			last = r
			if r.Client.Name == "previewer" {
				return lro.DeliveryChoice{PreviewTokens: 60}
			}
			return lro.DeliveryChoice{}
		}))
	plain := serveText(t, o, host.Call{Client: host.ClientInfo{Name: "other"}}, ticketsJSON(300))
	require.Len(t, plain.Content, 1, "descriptor mode has no preview by default")
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(plain.Content[0].Text), &d))
	assert.Len(t, d.JQRecipes, 10)
	assert.Equal(t, lro.DeliveryRequest{Tool: "tickets", Client: host.ClientInfo{Name: "other"}, Default: lro.DeliveryDescriptor}, last)

	with := serveText(t, o, host.Call{Client: host.ClientInfo{Name: "previewer"}, NativeExtract: true}, ticketsJSON(300))
	require.Len(t, with.Content, 2)
	assert.Contains(t, with.Content[1].Text, `"Ticket 1: the cache is cold"`)
	assert.NotContains(t, with.Content[1].Text, `"Ticket 9: `, "a 60-token preview holds a couple of tickets")
	assert.True(t, last.NativeExtract)
}

func TestDeliveryTruncate(t *testing.T) {
	dir := t.TempDir()
	var events int
	o := newOffloader(t, func(c *lro.Config) { c.Delivery = lro.DeliveryTruncate; c.OutputDir = dir }, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}),
		lro.WithHooks(lro.Hooks{OnWriteFailed: func(lro.WriteFailedEvent) { events++ }, OnOffload: func(lro.OffloadEvent) { events++ }}))
	res := serveText(t, o, host.Call{}, ticketsJSON(300))
	require.Len(t, res.Content, 2)
	var kept []map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &kept), "whole records, still a JSON array")
	assert.Greater(t, len(kept), 20)
	assert.Less(t, len(kept), 300)
	assert.LessOrEqual(t, len(res.Content[0].Text)/4, 1600, "within the threshold")
	assert.EqualValues(t, 1, kept[0]["id"], "the leading records")
	notice := res.Content[1].Text
	assert.Contains(t, notice, fmt.Sprintf("first %d of 300 records", len(kept)))
	assert.Contains(t, notice, "narrow the call")
	assert.NotContains(t, notice, "failed", "truncation was chosen, nothing failed")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file is written")
	assert.Zero(t, events, "neither an offload nor a failed write")
}

func TestDeliveryChosenPerTool(t *testing.T) {
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}),
		lro.WithDelivery(func(r lro.DeliveryRequest) lro.DeliveryChoice {
			if r.Tool == "logs" {
				return lro.DeliveryChoice{Mode: lro.DeliveryTruncate}
			}
			return lro.DeliveryChoice{Mode: "bogus"} // ignored: the default
		}))
	logs := serveText(t, o, host.Call{Tool: "logs"}, strings.Repeat("GET /index.html 200\n", 800))
	assert.Contains(t, logs.Content[len(logs.Content)-1].Text, "of 800 records")
	other := serveText(t, o, host.Call{Tool: "tickets"}, ticketsJSON(300))
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(other.Content[0].Text), &d))
	assert.True(t, d.Offloaded)
}

func TestSessionBudget(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.SessionBudgetTokens = 3000 }, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}))
	small := ticketsJSON(60) // about 1,000 tokens: under the threshold
	a, b := host.Call{Session: "a"}, host.Call{Session: "b"}
	for i := range 3 {
		res := serveText(t, o, a, small)
		assert.Equal(t, small, res.Content[0].Text, "call %d fits the budget", i+1)
	}
	res := serveText(t, o, a, small)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &d), "the 4th call passes the budget: %s", res.Content[0].Text)
	assert.Equal(t, 60, d.Summary.Count)

	assert.Equal(t, small, serveText(t, o, b, small).Content[0].Text, "another session has its own budget")
	tiny := `[{"id":1}]`
	assert.Equal(t, tiny, serveText(t, o, a, tiny).Content[0].Text, "a result smaller than a pointer stays inline")
	assert.Equal(t, small, serveText(t, o, host.Call{}, small).Content[0].Text, "no session, no budget")

	o.EndSession("a")
	assert.Equal(t, small, serveText(t, o, a, small).Content[0].Text, "an ended session starts over")
}

func TestSessionBudgetOffAtZero(t *testing.T) {
	o := newOffloader(t, nil, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}))
	small := ticketsJSON(40)
	for range 10 {
		assert.Equal(t, small, serveText(t, o, host.Call{Session: "a"}, small).Content[0].Text)
	}
}

func TestStructuredDescriptorOnlyForStructuredResults(t *testing.T) {
	o := newOffloader(t, nil, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}))
	text := serveText(t, o, host.Call{}, ticketsJSON(300))
	assert.Nil(t, text.Structured)
	res, replaced, err := o.Host().Serve(context.Background(), host.Call{Tool: "tickets"}, func(context.Context) (host.Result, error) {
		s := ticketsJSON(300)
		return host.Result{Content: []host.Content{host.TextContent(s)}, Structured: json.RawMessage(`{"tickets":` + s + `}`)}, nil
	})
	require.NoError(t, err)
	require.True(t, replaced)
	require.NotNil(t, res.Structured)
	assert.JSONEq(t, res.Content[0].Text, string(res.Structured.(json.RawMessage)), "one descriptor, in both representations the result had")
}

// TestTruncateCutsAHugeFirstRecord: a result whose one record is larger
// than the threshold was sent as "0 of 1 records" and no data; it is sent
// cut, and the notice says so, in truncate mode and in the fallback of a
// failed write alike.
func TestTruncateCutsAHugeFirstRecord(t *testing.T) {
	huge := `[{"id":1,"body":"` + strings.Repeat("lorem ipsum ", 10<<20/12) + `"}]`
	failing := lrotest.NewMemFS("/lro")
	failing.FailCreate(syscall.EACCES)
	for name, o := range map[string]*lro.Offloader{
		"truncate mode":  newOffloader(t, func(c *lro.Config) { c.Delivery = lro.DeliveryTruncate }, lro.WithAnyTool(lro.ToolPolicy{Generic: true})),
		"failed a write": newOffloader(t, nil, lro.WithFS(failing), lro.WithAnyTool(lro.ToolPolicy{Generic: true})),
	} {
		t.Run(name, func(t *testing.T) {
			res := serve(t, o, "dump", nil, host.Result{Content: []host.Content{host.TextContent(huge)}})
			var all strings.Builder
			for _, c := range res.Content {
				all.WriteString(c.Text)
			}
			text := all.String()
			assert.Less(t, len(text)/4, 2*o.Config().ThresholdTokens, "the result fits the context")
			assert.Contains(t, text, "the first record alone is larger than the threshold")
			assert.Contains(t, text, `{"id":1,"body":"lorem ipsum lorem`, "the record's beginning is shown")
			assert.Contains(t, text, "[cut]")
		})
	}
}

// TestDeliveryChosenOncePerCall: WithDelivery's function runs once for a
// result offloaded over the session budget, as documented (it ran twice:
// once to size the pointer, once to build it).
func TestDeliveryChosenOncePerCall(t *testing.T) {
	var calls atomic.Int64
	o := newOffloader(t, func(c *lro.Config) { c.SessionBudgetTokens = 3000 }, lro.WithTool("tickets", lro.ToolPolicy{Generic: true}),
		lro.WithDelivery(func(lro.DeliveryRequest) lro.DeliveryChoice {
			calls.Add(1)
			return lro.DeliveryChoice{Mode: lro.DeliveryCompact}
		}))
	small := ticketsJSON(60) // about 1,000 tokens: under the threshold
	a := host.Call{Session: "a"}
	for range 3 {
		serveText(t, o, a, small)
	}
	calls.Store(0)
	res := serveText(t, o, a, small)
	assert.Contains(t, res.Content[0].Text, `"offloaded":true`, "the 4th call passes the budget")
	assert.EqualValues(t, 1, calls.Load(), "chosen once for the call")

	calls.Store(0)
	serveText(t, o, host.Call{}, ticketsJSON(300))
	assert.EqualValues(t, 1, calls.Load(), "once for a result over the threshold")
}
