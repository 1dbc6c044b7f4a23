package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"
)

// The newcomer of issue 39: a memory server written before lro, whose
// records are not the specification's (no memory_type, modified or
// status; a content and a score of their own), whose list_memories pages
// by itself (limit, cursor, next_cursor) and whose recall_memories has a
// detail argument of its own ("brief" or "full"). Wiring lro in is one
// option of the mcp-go server, or one call on the official SDK's, plus
// lro_extract; nothing else of the server changes.

// newcomerMemory is one record of the newcomer's store.
type newcomerMemory struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Content   string   `json:"content"`
	Namespace string   `json:"namespace"`
	Tags      []string `json:"tags"`
	Created   string   `json:"created"`
	Score     float64  `json:"score"`
}

// newcomerStore holds 2,000 memories.
var newcomerStore = func() []newcomerMemory {
	out := make([]newcomerMemory, 2000)
	spaces := []string{"work/projects", "work/people", "home", "reading"}
	topics := []string{"cache", "deploy", "lunch", "book", "invoice"}
	for i := range out {
		out[i] = newcomerMemory{
			ID:        fmt.Sprintf("n-%04d", i),
			Title:     fmt.Sprintf("Note %d about the %s", i, topics[i%len(topics)]),
			Content:   fmt.Sprintf("Remember that the %s came up on day %d; follow up with the team.", topics[i%len(topics)], i%365),
			Namespace: spaces[i%len(spaces)],
			Tags:      []string{topics[i%len(topics)], []string{"todo", "done"}[i%2]},
			Created:   fmt.Sprintf("2026-%02d-%02dT09:00:00Z", 1+i%12, 1+i%28),
			Score:     float64(1000-i%1000) / 1000,
		}
	}
	return out
}()

// newcomerRecall is recall_memories: the memories whose title or content
// holds query, at most limit (default 10); detail "brief" leaves the
// content out.
func newcomerRecall(query, detail string, limit int) (map[string]any, error) {
	switch detail {
	case "", "brief", "full":
	default:
		return nil, fmt.Errorf("detail must be brief or full, not %q", detail)
	}
	if limit <= 0 {
		limit = 10
	}
	var out []newcomerMemory
	for _, m := range newcomerStore {
		if len(out) == limit {
			break
		}
		if strings.Contains(m.Title, query) || strings.Contains(m.Content, query) {
			if detail == "brief" {
				m.Content = ""
			}
			out = append(out, m)
		}
	}
	return map[string]any{"memories": out, "detail": detail}, nil
}

// newcomerList is list_memories: the page of limit memories (default 50)
// from cursor (an offset), and the cursor of the next page or null.
func newcomerList(limit int, cursor string) (map[string]any, error) {
	if limit <= 0 {
		limit = 50
	}
	from := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 || n > len(newcomerStore) {
			return nil, fmt.Errorf("bad cursor %q", cursor)
		}
		from = n
	}
	to := min(from+limit, len(newcomerStore))
	var next any
	if to < len(newcomerStore) {
		next = strconv.Itoa(to)
	}
	return map[string]any{"memories": newcomerStore[from:to], "next_cursor": next}, nil
}

// newcomerMCPGo is the newcomer's server on mcp-go, wired to off. With
// collect, list_memories hands its whole set to lro.Collect, as the docs
// tell a paged tool to.
func newcomerMCPGo(off *lro.Offloader, collect bool) *server.MCPServer {
	s := server.NewMCPServer("notes", "1.0.0", mcpgo.ServerOption(off)) // lro: the option
	s.AddTool(mcpgomcp.NewTool("recall_memories", mcpgomcp.WithString("query", mcpgomcp.Required()),
		mcpgomcp.WithString("detail", mcpgomcp.Enum("brief", "full")), mcpgomcp.WithNumber("limit")),
		func(_ context.Context, req mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			v, err := newcomerRecall(req.GetString("query", ""), req.GetString("detail", ""), req.GetInt("limit", 0))
			if err != nil {
				return mcpgomcp.NewToolResultError(err.Error()), nil
			}
			return mcpgomcp.NewToolResultJSON(v)
		})
	s.AddTool(mcpgomcp.NewTool("list_memories", mcpgomcp.WithNumber("limit"), mcpgomcp.WithString("cursor")),
		func(ctx context.Context, req mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			if collect && lro.Collect(ctx, newcomerStore, nil) {
				return mcpgomcp.NewToolResultText(""), nil // replaced by the descriptor
			}
			v, err := newcomerList(req.GetInt("limit", 0), req.GetString("cursor", ""))
			if err != nil {
				return mcpgomcp.NewToolResultError(err.Error()), nil
			}
			return mcpgomcp.NewToolResultJSON(v)
		})
	mcpgo.AddExtractTool(s, off) // lro: lro_extract
	return s
}

type newcomerRecallIn struct {
	Query  string `json:"query"`
	Detail string `json:"detail,omitempty" jsonschema:"brief or full"`
	Limit  int    `json:"limit,omitempty"`
}

type newcomerListIn struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// newcomerOfficial is the newcomer's server on the official SDK, wired
// to off; collect as for newcomerMCPGo.
func newcomerOfficial(off *lro.Offloader, collect bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	answer := func(v map[string]any, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		b, err := json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
	}
	mcp.AddTool(s, &mcp.Tool{Name: "recall_memories"}, func(_ context.Context, _ *mcp.CallToolRequest, in newcomerRecallIn) (*mcp.CallToolResult, any, error) {
		return answer(newcomerRecall(in.Query, in.Detail, in.Limit))
	})
	mcp.AddTool(s, &mcp.Tool{Name: "list_memories"}, func(ctx context.Context, _ *mcp.CallToolRequest, in newcomerListIn) (*mcp.CallToolResult, any, error) {
		if collect && lro.Collect(ctx, newcomerStore, nil) {
			return &mcp.CallToolResult{}, nil, nil // replaced by the descriptor
		}
		return answer(newcomerList(in.Limit, in.Cursor))
	})
	gosdk.Install(s, off)        // lro: the middleware and the resource templates
	gosdk.AddExtractTool(s, off) // lro: lro_extract
	return s
}

// newcomerHosts serves the newcomer's server on each SDK over streamable
// HTTP and connects that SDK's own client to it.
var newcomerHosts = []struct {
	name    string
	connect func(t *testing.T, off *lro.Offloader, collect bool) callFunc
}{
	{"mcp-go", func(t *testing.T, off *lro.Offloader, collect bool) callFunc {
		url := serveHTTP(t, server.NewStreamableHTTPServer(newcomerMCPGo(off, collect)))
		return confClients[1].connect(t, url, nil)
	}},
	{"official", func(t *testing.T, off *lro.Offloader, collect bool) callFunc {
		s := newcomerOfficial(off, collect)
		url := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		return confClients[0].connect(t, url, nil)
	}},
}

// TestNewcomerDetailIsTheTools: a detail argument that the tool declares
// reaches its handler as sent, and lro judges the result at its default
// level; a detail the tool does not declare, and that is not lro's, is
// refused as before (issue 39.4).
func TestNewcomerDetailIsTheTools(t *testing.T) {
	for _, h := range newcomerHosts {
		t.Run(h.name, func(t *testing.T) {
			call := h.connect(t, newOffloader(t, nil), false)
			r := call("recall_memories", map[string]any{"query": "cache", "detail": "brief", "limit": 3})
			require.False(t, r.IsError, "%v", r.Texts)
			var small struct {
				Memories []newcomerMemory
				Detail   string
			}
			require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &small))
			assert.Equal(t, "brief", small.Detail, "the handler saw the tool's own detail")
			assert.Len(t, small.Memories, 3)

			// Large: offloaded, and the handler still saw "brief".
			r = call("recall_memories", map[string]any{"query": "cache", "detail": "brief", "limit": 300})
			require.False(t, r.IsError, "%v", r.Texts)
			var d lro.OffloadResponse
			require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d))
			require.True(t, d.Offloaded)
			assert.JSONEq(t, `"brief"`, string(d.Summary.Extra["detail"]), "the result's own detail field, copied to extra")
			assert.Equal(t, 300, d.Summary.Count)

			// One of lro's levels is lro's (and reaches the handler too,
			// which refuses "medium" itself).
			r = call("recall_memories", map[string]any{"query": "cache", "detail": "medium", "limit": 3})
			require.True(t, r.IsError)
			assert.Contains(t, r.Texts[0], `detail must be brief or full, not "medium"`, "the tool's own error")
		})
	}
}

// namedLimit is the limit a paged tool's error names.
var namedLimit = regexp.MustCompile(`"limit": ?(\d+)`)

// A cursorWalk is what a client saw following list_memories' cursors.
type cursorWalk struct {
	seen                      map[string]int
	calls, refused, offloaded int
	dups                      int
	firstError                string
}

// walkCursors follows list_memories' cursors from limit 500: after a tool
// error it calls again with the limit the error names, and after inline
// pages it asks for whole (0: never) it calls with a limit that takes in
// the rest of the set. Offloaded pages are read from their files.
func walkCursors(t *testing.T, call callFunc, whole int) cursorWalk {
	t.Helper()
	w := cursorWalk{seen: map[string]int{}}
	limit, cursor, inline := 500, "", 0
	for w.calls < 1000 {
		if whole > 0 && inline == whole {
			limit = 100000
		}
		args := map[string]any{"limit": limit}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r := call("list_memories", args)
		w.calls++
		if r.IsError {
			w.refused++
			if w.firstError == "" {
				w.firstError = r.Texts[0]
			}
			m := namedLimit.FindStringSubmatch(r.Texts[0])
			require.NotNil(t, m, "the error names a limit: %s", r.Texts[0])
			n, _ := strconv.Atoi(m[1])
			require.Less(t, n, limit, r.Texts[0])
			require.Positive(t, n)
			limit = n
			continue
		}
		var page struct {
			Memories   []newcomerMemory
			NextCursor *string `json:"next_cursor"`
			Offloaded  bool
			FilePath   string `json:"file_path"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &page), "%.300s", r.Texts[0])
		if page.Offloaded {
			w.offloaded++
			_, lines := readJSONL(t, mustRead(t, page.FilePath))
			for _, l := range lines {
				var m newcomerMemory
				require.NoError(t, json.Unmarshal(l, &m))
				page.Memories = append(page.Memories, m)
			}
		} else {
			inline++
			require.Len(t, r.Texts, 1, "nothing cut: no notice beside the page: %.200q", r.Texts)
		}
		for _, m := range page.Memories {
			w.seen[m.ID]++
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	for _, n := range w.seen {
		w.dups += n - 1
	}
	return w
}

// TestNewcomerCursorWalkSeesEveryRecord: a client that follows cursors
// through 2,000 memories at limit 500, calling again with the limit an
// error names and reading offloaded pages from their files, sees every
// record exactly once (issue 39.1). The page is never cut while its cursor
// goes out: one over the bound is refused, naming a limit that fits.
func TestNewcomerCursorWalkSeesEveryRecord(t *testing.T) {
	for _, h := range newcomerHosts {
		t.Run(h.name, func(t *testing.T) {
			var logs syncBuffer
			call := h.connect(t, newOffloader(t, nil, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))), false)
			for _, whole := range []int{0, 3} {
				w := walkCursors(t, call, whole)
				t.Logf("%s, rest asked whole after %d inline pages: %d records seen, %d duplicates, %d calls (%d refused naming a limit, %d offloaded)",
					h.name, whole, len(w.seen), w.dups, w.calls, w.refused, w.offloaded)
				assert.Len(t, w.seen, len(newcomerStore))
				assert.Zero(t, w.dups)
				assert.Equal(t, 1, w.refused, "the limit named fits the next pages too")
				assert.Equal(t, min(whole, 1), w.offloaded)
				assert.Contains(t, w.firstError, "next_cursor")
				assert.Contains(t, w.firstError, "nothing of it was sent")
				if whole == 0 {
					t.Logf("the first answer: %s", w.firstError)
				}
			}
			assert.Equal(t, 1, strings.Count(logs.String(), "pages by itself"), "the author is told once: %s", logs.String())
			assert.Contains(t, logs.String(), "lro.Collect")
		})
	}
}

// TestNewcomerRecordsAreJudgedByShape: memories of another shape than
// the specification's get their own fields in the line schema and recipes
// that answer on them, with jq as written and through lro_extract (issue
// 39.3).
func TestNewcomerRecordsAreJudgedByShape(t *testing.T) {
	testenv.JQ(t)
	for _, h := range newcomerHosts {
		t.Run(h.name, func(t *testing.T) {
			call := h.connect(t, newOffloader(t, nil), false)
			r := call("recall_memories", map[string]any{"query": "Note", "limit": 400})
			require.False(t, r.IsError, "%v", r.Texts)
			var d lro.OffloadResponse
			require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d))
			require.True(t, d.Offloaded)
			assert.Equal(t, "recall", d.Summary.Operation)
			for _, f := range []string{"content", "score", "created", "tags"} {
				assert.Contains(t, string(d.LineSchema), `"`+f+`"`)
			}
			for _, f := range []string{"memory_type", "modified", "status"} {
				assert.NotContains(t, string(d.LineSchema), `"`+f+`"`)
			}
			require.Len(t, d.JQRecipes, lro.RecipeCount)
			for i, rc := range d.JQRecipes {
				out, err := exec.Command("bash", "-c", rc.Command).Output()
				require.NoError(t, err, rc.Command)
				_, filter, _ := strings.Cut(rc.Command, " | jq ")
				t.Logf("%2d %-40s jq %s: %d lines", i+1, rc.Description, strings.TrimSuffix(filter, "|head -c32768"), strings.Count(string(out), "\n"))
				assert.NotEmpty(t, strings.TrimSpace(string(out)), "recipe %d (%s) prints nothing: %s", i+1, rc.Description, rc.Command)

				x := call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "recipe": i + 1})
				require.False(t, x.IsError, "%v", x.Texts)
				assert.NotContains(t, x.Texts[0], "no results", "recipe %d (%s) through lro_extract", i+1, rc.Description)
			}
		})
	}
}

// syncBuffer is a log that a server's goroutines write while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNewcomerCollectTakesPrecedence: with lro.Collect, as the docs tell a
// paged tool to, list_memories(limit: 5) returns a descriptor of all 2,000
// memories, the specification's precedence of offloading over pagination,
// and the author is told once (issue 39.2).
func TestNewcomerCollectTakesPrecedence(t *testing.T) {
	for _, h := range newcomerHosts {
		t.Run(h.name, func(t *testing.T) {
			var logs syncBuffer
			call := h.connect(t, newOffloader(t, nil, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))), true)
			for range 2 {
				r := call("list_memories", map[string]any{"limit": 5})
				require.False(t, r.IsError, "%v", r.Texts)
				var d lro.OffloadResponse
				require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d), "%.300s", r.Texts[0])
				require.True(t, d.Offloaded)
				assert.Equal(t, len(newcomerStore), d.Summary.Count)
				assert.NotContains(t, r.Texts[0], "next_cursor")
			}
			assert.Equal(t, 1, strings.Count(logs.String(), "was asked for 5 records a page and handed 2000 to lro.Collect"), logs.String())
		})
	}
}
