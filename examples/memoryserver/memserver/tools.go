package memserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
)

type tools struct{ store *memstore.Store }

// scoredMemory is a search hit as the tools return it; the offload
// middleware takes the score for the summary and the memory for the line.
type scoredMemory struct {
	Score  float64 `json:"score"`
	Memory any     `json:"memory"`
}

type recallResult struct {
	Query   string         `json:"query"`
	Count   int            `json:"count"`
	Results []scoredMemory `json:"results"`
}

func (t tools) recall(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, err := req.RequireString("query")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	limit, err := intArg(req, "limit", 20, 1, 100000)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	detail, err := detailOf(req, "light")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	hits := t.store.Recall(query, req.GetString("namespace", ""), limit)
	out := recallResult{Query: query, Count: len(hits), Results: make([]scoredMemory, len(hits))}
	for i, h := range hits {
		m, _ := memstore.Project(h.Memory, detail)
		out.Results[i] = scoredMemory{Score: round(h.Score), Memory: m}
	}
	return mcp.NewToolResultJSON(out)
}

func (t tools) inject(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, err := req.RequireString("query")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	limit, err := intArg(req, "limit", 50, 1, 100000)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	budget, err := intArg(req, "token_budget", 2000, 1, 1<<30)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	detail, err := detailOf(req, "medium")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	hits := t.store.Recall(query, "", limit)
	// The specification judges inject_context on its pre-budget memories:
	// hand them over before budgeting trims them.
	memories := make([]any, len(hits))
	scores := make([]float64, len(hits))
	for i, h := range hits {
		memories[i], _ = memstore.Project(h.Memory, detail)
		scores[i] = round(h.Score)
	}
	if lro.Collect(ctx, memories, scores) {
		return mcp.NewToolResultText(""), nil // replaced by the descriptor
	}
	return mcp.NewToolResultText(memstore.FormatContext(hits, detail, budget)), nil
}

type listResult struct {
	Total      int    `json:"total"`
	Memories   []any  `json:"memories"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func (t tools) list(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	limit, err := intArg(req, "limit", 50, 1, 100000)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	detail, err := detailOf(req, "light")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	offset := 0
	if c := req.GetString("cursor", ""); c != "" {
		if offset, err = strconv.Atoi(c); err != nil || offset < 0 {
			return mcp.NewToolResultError(fmt.Sprintf("invalid cursor %q: pass the next_cursor of the previous page", c)), nil
		}
	}
	ns := req.GetString("namespace", "")
	if offset == 0 {
		// The first request judges the whole set, before any cursor exists:
		// an offloaded listing has no cursor, the file holds everything.
		all, _ := t.store.List(ns, 0, 0)
		if lro.Collect(ctx, project(all, detail), nil) {
			return mcp.NewToolResultText(""), nil
		}
	}
	page, total := t.store.List(ns, offset, limit)
	out := listResult{Total: total, Memories: project(page, detail)}
	if offset+len(page) < total {
		out.NextCursor = strconv.Itoa(offset + len(page))
	}
	return mcp.NewToolResultJSON(out)
}

func project(mems []*memstore.Memory, detail string) []any {
	out := make([]any, len(mems))
	for i, m := range mems {
		out[i], _ = memstore.Project(m, detail)
	}
	return out
}

// detailOf validates the detail argument; the offload middleware checks it
// too, but the tool must stand on its own without it.
func detailOf(req mcp.CallToolRequest, def string) (string, error) {
	v, ok := req.GetArguments()["detail"]
	if !ok {
		return def, nil
	}
	s, _ := v.(string)
	switch s {
	case "light", "medium", "full":
		return s, nil
	}
	b, _ := json.Marshal(v)
	return "", fmt.Errorf("invalid detail %s: want \"light\", \"medium\" or \"full\"", b)
}

// intArg reads a whole-number argument, refusing what is not one.
func intArg(req mcp.CallToolRequest, key string, def, lo, hi int) (int, error) {
	v, ok := req.GetArguments()[key]
	if !ok || v == nil {
		return def, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		b, _ := json.Marshal(v)
		return 0, fmt.Errorf("invalid %s %s: want a whole number from %d to %d", key, b, lo, hi)
	}
	return int(f), nil
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }
