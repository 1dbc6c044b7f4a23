package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
)

// This file is an ordinary MCP server with one tool, get_logs, that can
// return thousands of records: copy it as the start of your own. Only
// newOffloader and the mcpgo.ServerOption(off) given to newServer concern
// offloading; the tool's handler knows nothing about it.

// newOffloader returns the Offloader of the server. A tool is offloaded
// only if it has a policy: the specification's memory tools
// (recall_memories, inject_context, list_memories, search_*) have one
// built in, every other tool passes through untouched unless given one.
// The environment variables ATLATL_PROMPT__OFFLOAD__* override cfg.
func newOffloader(cfg lro.Config, opts ...lro.Option) (*lro.Offloader, error) {
	return lro.New(cfg, append([]lro.Option{
		// get_logs returns log records, not MIF memories: Generic infers
		// the line schema and the jq recipes from the records themselves.
		// RecordsField names the array that holds them (without it, the
		// only array field of the result is taken).
		lro.WithTool("get_logs", lro.ToolPolicy{Generic: true, RecordsField: "logs"}),
		// To offload every other tool of the server too:
		//   lro.WithAnyTool(lro.ToolPolicy{Generic: true}),
		// and, if some of them happen to be named like the memory tools
		// but return something else:
		//   lro.WithoutBuiltinTools(),
	}, opts...)...)
}

// newServer returns the server with its tool. Pass mcpgo.ServerOption(off) to
// offload its large results; with no option it serves them inline.
func newServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("logs", "1.0.0", append([]server.ServerOption{server.WithToolCapabilities(false)}, opts...)...)
	s.AddTool(getLogsTool, getLogs)
	return s
}

var getLogsTool = mcp.NewTool("get_logs",
	mcp.WithDescription("Return the most recent log records of a service, oldest first."),
	mcp.WithString("service", mcp.Description("The service whose logs to return."), mcp.DefaultString("checkout")),
	mcp.WithNumber("limit", mcp.Description("How many records to return (default 500, at most 10000)."), mcp.DefaultNumber(500)),
)

// logRecord is one line of a service's log.
type logRecord struct {
	Time      string `json:"time"`
	Level     string `json:"level"`
	Service   string `json:"service"`
	Message   string `json:"message"`
	LatencyMS int    `json:"latency_ms"`
	TraceID   string `json:"trace_id"`
}

// logsResult is what get_logs returns: the records and how many there are.
type logsResult struct {
	Service string      `json:"service"`
	Count   int         `json:"count"`
	Logs    []logRecord `json:"logs"`
}

func getLogs(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	service := req.GetString("service", "checkout")
	limit := req.GetInt("limit", 500)
	if limit < 1 || limit > 10000 {
		return mcp.NewToolResultError(fmt.Sprintf("limit must be from 1 to 10000, got %d", limit)), nil
	}
	logs := make([]logRecord, limit)
	for i := range logs {
		logs[i] = logLine(service, i)
	}
	return mcp.NewToolResultJSON(logsResult{Service: service, Count: len(logs), Logs: logs})
}

// logLine makes up the i-th record of a service's log, the same on every
// run: mostly requests, some slow ones, a few failed payments.
func logLine(service string, i int) logRecord {
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	r := logRecord{
		Time:      start.Add(time.Duration(i) * 1700 * time.Millisecond).Format(time.RFC3339Nano),
		Level:     "INFO",
		Service:   service,
		LatencyMS: 20 + i*37%180,
		TraceID:   fmt.Sprintf("%016x", uint64(i+1)*0x9e3779b97f4a7c15),
	}
	switch {
	case i%29 == 0:
		r.Level, r.LatencyMS = "ERROR", 3000
		r.Message = fmt.Sprintf("payment declined for order %d: gateway timeout after 3 s", 10000+i)
	case i%7 == 0:
		r.Level, r.LatencyMS = "WARN", 900+i%400
		r.Message = fmt.Sprintf("slow request GET /api/orders/%d: %d ms", 10000+i, r.LatencyMS)
	default:
		r.Message = fmt.Sprintf("GET /api/orders/%d returned 200", 10000+i)
	}
	return r
}
