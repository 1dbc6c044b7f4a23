package lro

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/jsonscan"
)

// Middleware returns mcp-go tool middleware that offloads large results of
// the tools with a policy (see [WithTool]; the specification's
// recall_memories, inject_context, list_memories and search tools have one
// built in). Add it with server.WithToolHandlerMiddleware or
// (*server.MCPServer).Use, or use [Offloader.ServerOption].
//
// Results pass through untouched when they are errors, ask for more input,
// come from a tool without a policy or with an output schema (unless the
// policy allows it), or when offloading is disabled. A result that is
// offloaded has its text and structured content replaced by the
// descriptor. An invalid detail argument is returned as a tool error.
func (o *Offloader) Middleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			policy, ok := o.policyFor(req.Params.Name)
			if !ok || !o.cfg.Enabled || o.bypass(ctx, req) {
				return next(ctx, req)
			}
			return o.serve(ctx, req, next, policy)
		}
	}
}

// ServerOption returns a server.ServerOption that adds
// [Offloader.Middleware] and the hooks of [Offloader.AddHooks]:
//
//	s := server.NewMCPServer("memory", "1.0.0", off.ServerOption())
//
// Give it after server.WithHooks, which would replace the hooks it adds.
func (o *Offloader) ServerOption() server.ServerOption {
	mw := server.WithToolHandlerMiddleware(o.Middleware())
	return func(s *server.MCPServer) {
		mw(s)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		o.AddHooks(h)
	}
}

// Wrap returns handler with offloading under policy, whatever the
// Offloader's configured tools: for servers that wrap handlers one by one.
func (o *Offloader) Wrap(policy ToolPolicy, handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !o.cfg.Enabled || o.bypass(ctx, req) {
			return handler(ctx, req)
		}
		return o.serve(ctx, req, handler, policy)
	}
}

func (o *Offloader) policyFor(tool string) (ToolPolicy, bool) {
	if tool == ExtractToolName {
		return ToolPolicy{}, false // no references to references
	}
	if p, ok := o.opts.tools[tool]; ok {
		return p, true
	}
	if o.opts.builtinTools {
		if p, ok := builtinPolicy(tool); ok {
			return p, true
		}
	}
	if p := o.opts.anyTool; p != nil {
		return *p, true
	}
	return ToolPolicy{}, false
}

func (o *Offloader) serve(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc, policy ToolPolicy) (*mcp.CallToolResult, error) {
	tool := req.Params.Name
	args := req.GetArguments()
	detail := policy.DefaultDetail
	if detail == "" {
		detail = DetailLight
	}
	if v, present := args["detail"]; present && v != nil && !policy.Generic {
		s, _ := v.(string)
		d, err := ParseDetail(s)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("%s: invalid detail %s: want \"light\", \"medium\" or \"full\"", tool, jsonText(v))), nil
		}
		detail = d
	}
	if !policy.AllowOutputSchema && hasOutputSchema(ctx, tool) {
		return next(ctx, req)
	}

	c := &collector{o: o, threshold: o.cfg.ThresholdTokens}
	res, err := next(context.WithValue(ctx, collectorKey{}, c), req)
	if err != nil || res == nil || res.IsError || res.NeedsInput() {
		return res, err
	}
	set := ResultSet{Operation: policy.operationFor(tool), Detail: detail, Generic: policy.Generic}
	if q, ok := args["query"].(string); ok {
		set.Query = &q
	}

	records, scores, tokens, collected, promised, cerr := c.collected()
	if cerr != nil {
		o.logf(ctx, slog.LevelWarn, "lro: collected records cannot be offloaded", tool, cerr)
		return res, nil
	}
	if collected {
		set.Records, set.Scores, set.Tokens, set.Validated = records, scores, tokens, true
		f := found{records: records, elements: rawElements(records)}
		out, err := o.Offload(ctx, set)
		if err != nil {
			o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", tool, err)
			if !promised {
				return res, nil
			}
			// The handler returned a placeholder, trusting Collect: send
			// the collected records instead, complete.
			return &mcp.CallToolResult{Result: res.Result, Content: []mcp.Content{mcp.NewTextContent(string(f.truncated(len(records))))}}, nil
		}
		return o.respond(res, out, f, false)
	}

	text, structured, ok := payloadOf(res)
	if !ok {
		return res, nil
	}
	hasStructured := res.StructuredContent != nil || res.RawStructuredContent != nil
	// The threshold applies to the result set once. A JSON text is taken to
	// be the serialization of the structured content next to it, as the MCP
	// specification says it should be, and is what is judged; only a text
	// that is something else (a summary) adds the structured content.
	//
	// Fast path: no rune costs more than a token per three bytes, so a
	// result this small is under the threshold without a look inside.
	size := len(text) + len(structured)
	if _, heuristic := o.opts.estimator.(HeuristicEstimator); heuristic && size <= 3*o.cfg.ThresholdTokens &&
		(res.StructuredContent == nil || structured != nil || looksJSON(text)) {
		return res, nil
	}
	payload := bytesOf(text)
	isJSON := looksJSON(text) && jsonscan.Valid(payload)
	tokens = o.EstimateTokens(payload)
	if hasStructured && !isJSON {
		if structured == nil {
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return res, nil
			}
			structured = b
		}
		tokens += o.EstimateTokens(structured)
		payload, isJSON = structured, jsonscan.Valid(structured)
	}
	if tokens <= o.cfg.ThresholdTokens {
		return res, nil
	}
	f := findRecords(payload, isJSON, policy.RecordsField)
	set.Records, set.Scores, set.Extra, set.Tokens, set.Validated = f.records, f.scores, f.extra, tokens, true
	set.sent, set.overhead = f.elements, o.EstimateTokens(f.truncated(0))
	set.Generic = set.Generic || f.generic
	out, err := o.Offload(ctx, set)
	if err != nil {
		o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", tool, err)
		return res, nil
	}
	return o.respond(res, out, f, hasStructured)
}

// respond turns an outcome into the result to send.
func (o *Offloader) respond(res *mcp.CallToolResult, out Outcome, f found, structured bool) (*mcp.CallToolResult, error) {
	switch out.Action {
	case Offloaded:
		b, err := json.Marshal(out.Response)
		if err != nil {
			return res, nil
		}
		r := &mcp.CallToolResult{Result: res.Result, Content: []mcp.Content{mcp.NewTextContent(string(b))}}
		if structured {
			r.StructuredContent = json.RawMessage(b)
		}
		return r, nil
	case Truncated:
		payload := f.truncated(out.Kept)
		r := &mcp.CallToolResult{Result: res.Result, Content: []mcp.Content{
			mcp.NewTextContent(string(payload)),
			mcp.NewTextContent(out.Warning),
		}}
		if structured && f.object != nil {
			r.StructuredContent = json.RawMessage(payload)
		}
		return r, nil
	}
	return res, nil
}

// payloadOf returns the text of a result made of one text item, and the
// raw structured content when the result carries its bytes.
func payloadOf(res *mcp.CallToolResult) (text string, structured []byte, ok bool) {
	if len(res.Content) != 1 {
		return "", nil, false
	}
	switch c := res.Content[0].(type) {
	case mcp.TextContent:
		text = c.Text
	case *mcp.TextContent:
		text = c.Text
	default:
		return "", nil, false
	}
	if len(res.RawStructuredContent) > 0 {
		structured = res.RawStructuredContent
	} else if raw, isRaw := res.StructuredContent.(json.RawMessage); isRaw {
		structured = raw
	}
	return text, structured, true
}

// looksJSON reports whether text is shaped like a JSON object or array.
func looksJSON(text string) bool {
	t := strings.TrimSpace(text)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

func hasOutputSchema(ctx context.Context, tool string) bool {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return false
	}
	st := srv.GetTool(tool)
	return st != nil && (st.Tool.OutputSchema.Type != "" || len(st.Tool.RawOutputSchema) > 0)
}

func rawElements(records []json.RawMessage) [][]byte {
	out := make([][]byte, len(records))
	for i, r := range records {
		out[i] = r
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (o *Offloader) logf(ctx context.Context, level slog.Level, msg, tool string, err error) {
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, level, msg, slog.String("tool", tool), slog.Any("error", err))
	}
}
