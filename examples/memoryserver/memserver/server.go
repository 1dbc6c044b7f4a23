// Package memserver is the example memory server: the specification's
// recall_memories, inject_context and list_memories tools over an
// in-memory store of MIF memories, with Large Result Offloading added by
// one server option.
//
// It is a package, not only a command, so that the quickstart and the
// tests can run the very same server in process.
package memserver

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
)

// Name and Version identify the server to clients.
const (
	Name    = "lro-memory"
	Version = "0.1.0"
)

// New returns an MCP server with the memory tools over store. Results go
// through off's middleware; off may be nil to serve without offloading.
// Extra server options are applied after the offloader's.
func New(store *memstore.Store, off *lro.Offloader, opts ...server.ServerOption) *server.MCPServer {
	var all []server.ServerOption
	all = append(all, server.WithToolCapabilities(true), server.WithRecovery())
	if off != nil {
		all = append(all, off.ServerOption())
	}
	s := server.NewMCPServer(Name, Version, append(all, opts...)...)
	t := tools{store: store}
	s.AddTool(recallTool, t.recall)
	s.AddTool(injectTool, t.inject)
	s.AddTool(listTool, t.list)
	return s
}

var detailArg = mcp.WithString("detail",
	mcp.Description("Detail level of each memory: light (ids, titles, namespaces, tags, dates), medium (adds content, summary, confidence) or full (the complete MIF object)."),
	mcp.Enum("light", "medium", "full"))

var recallTool = mcp.NewTool("recall_memories",
	mcp.WithDescription("Recall the memories most relevant to a query, best first, with their relevance scores."),
	mcp.WithString("query", mcp.Required(), mcp.Description("What to look for.")),
	mcp.WithNumber("limit", mcp.Description("How many memories to return (default 20, at most 100000)."), mcp.DefaultNumber(20)),
	mcp.WithString("namespace", mcp.Description("Only memories whose namespace starts with this, e.g. _semantic or _episodic/incidents.")),
	detailArg,
)

var injectTool = mcp.NewTool("inject_context",
	mcp.WithDescription("Format the memories relevant to a query as a context block for a prompt, within a token budget."),
	mcp.WithString("query", mcp.Required(), mcp.Description("What the context is for.")),
	mcp.WithNumber("limit", mcp.Description("How many memories to consider before budgeting (default 50)."), mcp.DefaultNumber(50)),
	mcp.WithNumber("token_budget", mcp.Description("Largest size of the context block in tokens (default 2000)."), mcp.DefaultNumber(2000)),
	detailArg,
)

var listTool = mcp.NewTool("list_memories",
	mcp.WithDescription("List memories, newest first, a page at a time."),
	mcp.WithString("namespace", mcp.Description("Only memories whose namespace starts with this.")),
	mcp.WithNumber("limit", mcp.Description("Page size (default 50)."), mcp.DefaultNumber(50)),
	mcp.WithString("cursor", mcp.Description("The next_cursor of the previous page.")),
	detailArg,
)
