package lro_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// descriptorBudget is the most tokens (bytes/4 of the compact JSON the
// model reads) a descriptor may take with a file path of budgetPathLen
// characters: issue 10's budget for descriptor mode at full detail, held
// by every kind of descriptor.
const descriptorBudget = 700

// budgetPathLen is the length of the path the budget is measured at: what
// the default directory gives a recall for user 1000,
// /tmp/lro-1000/atlatl-recall-{ulid}.jsonl.
const budgetPathLen = 60

// dirFor returns a directory in which the file of operation op has a path
// of budgetPathLen characters: {dir}/atlatl-{op}-{ulid}.jsonl.
func dirFor(op string) string {
	const dir = "/srv/"
	return dir + strings.Repeat("x", budgetPathLen-len(dir)-len("/atlatl-"+op+"-")-26-len(".jsonl"))
}

// sectionAllowance is what each further file listed in a descriptor's
// sections may add to the budget, in tokens: its path, line schema and
// first recipes (sections.go), about 180 tokens in the fixture.
const sectionAllowance = 200

// TestDescriptorBudget measures every kind of descriptor as the model reads
// it, with shell guidance and with native (lro_extract) guidance: memories
// at each detail level as the specification's OffloadResponse (200
// memories with a score range, as the golden files), generic records, the
// lines of a text, and a result of two large fields, whose sections list
// has an allowance of its own. Run it with -v to see the sizes:
//
//	go test -run TestDescriptorBudget -v .
func TestDescriptorBudget(t *testing.T) {
	check := func(t *testing.T, name string, path, text string) {
		t.Helper()
		require.Len(t, path, budgetPathLen, "the fixture's path")
		tokens := len(text) / 4
		t.Logf("%-24s %5d bytes  ~%d tokens", name, len(text), tokens)
		assert.LessOrEqual(t, tokens, descriptorBudget, "%s descriptor over budget:\n%s", name, text)
	}
	guidance := map[bool]string{false: "shell", true: "native"}

	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		for _, native := range []bool{false, true} {
			o := newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS(dirFor("recall"))))
			if native {
				mcpgo.AddExtractTool(server.NewMCPServer("budget", "1"), o)
			}
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 200, d), Scores: []float64{0.31, 1}})
			require.NoError(t, err)
			require.Equal(t, lro.Offloaded, out.Action)
			require.Len(t, out.Response.JQRecipes, lro.RecipeCount)
			check(t, "memory "+string(d)+" "+guidance[native], out.Response.FilePath, mustJSONText(t, out.Response))
		}
	}

	var log strings.Builder
	for i := range 400 {
		log.WriteString("2026-11-23T10:00:00Z worker-" + string(rune('0'+i%4)) + " processed batch\n")
	}
	for _, c := range []struct{ name, tool, body string }{
		{"generic", "tickets", mustJSON(t, tickets(200))},
		{"text", "tail_log", log.String()},
		{"two sections", "memory_graph", mustJSON(t, graph(120, 300))},
	} {
		for _, native := range []bool{false, true} {
			o := genericOffloader(t, lro.WithFS(lrotest.NewMemFS(dirFor(c.tool))))
			res, replaced, err := o.Host().Serve(ctx, host.Call{Tool: c.tool, NativeExtract: native},
				func(context.Context) (host.Result, error) {
					return host.Result{Content: []host.Content{host.TextContent(c.body)}}, nil
				})
			require.NoError(t, err)
			require.True(t, replaced)
			d, text := descriptorIn(t, res, 0)
			if len(d.Sections) == 0 {
				check(t, c.name+" "+guidance[native], d.FilePath, text)
				continue
			}
			// The descriptor of the file within the budget, and each other
			// file its sections list within the allowance.
			name := c.name + " " + guidance[native]
			list := `,"sections":` + mustJSONText(t, d.Sections)
			require.Contains(t, text, list)
			check(t, name+", own", d.FilePath, strings.Replace(text, list, "", 1))
			t.Logf("%-24s %5d bytes  ~%d tokens with its sections list", name, len(text), len(text)/4)
			assert.LessOrEqual(t, len(text)/4, descriptorBudget+sectionAllowance*len(d.Sections), "%s descriptor over budget:\n%s", name, text)
		}
	}
}

// mustJSONText encodes v as Serve does: compact, without HTML escaping.
func mustJSONText(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return strings.TrimSuffix(b.String(), "\n")
}
