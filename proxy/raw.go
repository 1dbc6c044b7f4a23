package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
)

// The raw path of a forwarded result. mcp-go's client reads a tools/call
// result four to eight times: its transport decodes the response (twice
// more for an event, to tell a response from a request), then
// mcp.ParseCallToolResult decodes the result three times, twice into maps
// (a probe, the result, the structured content into map[string]any). That
// cost a 200-memory offload through the proxy more than half its CPU. The
// proxy needs none of it: the offload middleware reads the text of the
// text items, and the structured content as bytes.
//
// So the proxy's HTTP transport (limitTransport) takes the response to a
// forwarded call off the wire itself, once the limits have let it
// through, decodes it once into what the middleware reads
// (decodeRemoteMessage), and passes mcp-go the same response with a stub
// result in its place, which mcp-go reads in no time. The typed client
// still sends the request (its ID, the per-request _meta and headers of
// protocol 2026-07-28, its multi-round-trip loop), so nothing of that is
// copied here.
//
// A message the lean decode does not take (a notification, a request of
// the remote, an error, a result that asks for input, a content item of a
// type it cannot read, anything malformed) reaches mcp-go as it came, and
// the typed client parses it, or fails on it, as it always did.

// rawCallKey is the context key of the *rawCall of a forwarded call.
type rawCallKey struct{}

// rawCall receives the result of a forwarded tools/call, decoded by the
// lean path, or nil when the typed client has it. The proxy's forward
// handler puts it in the call's context; proxyTransport.SendRequest fills
// it in.
type rawCall struct {
	res  *mcp.CallToolResult
	shed int // the tokens of the _meta dropped from the result (see Proxy.shedMeta), or 0
}

func withRawCall(ctx context.Context, c *rawCall) context.Context {
	return context.WithValue(ctx, rawCallKey{}, c)
}

// rawStub is the result mcp-go reads in place of one the lean path took:
// a complete result with nothing in it.
var rawStub = json.RawMessage(`{"content":[]}`)

// remoteResult is the part of a tools/call result the proxy reads, field
// for field as mcp.CallToolResult decodes it (encoding/json, keys matched
// without regard to case), except the structured content, kept as bytes.
type remoteResult struct {
	Meta          *mcp.Meta         `json:"_meta"`
	ResultType    mcp.ResultType    `json:"resultType"`
	Content       []json.RawMessage `json:"content"`
	Structured    json.RawMessage   `json:"structuredContent"`
	IsError       bool              `json:"isError"`
	InputRequests json.RawMessage   `json:"inputRequests"`
	RequestState  string            `json:"requestState"`
}

// remoteMessage is a JSON-RPC message of the remote, as far as the lean
// path reads it.
type remoteMessage struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Error  json.RawMessage `json:"error"`
	Result json.RawMessage `json:"result"`
}

// decodeRemoteMessage decodes data, a JSON-RPC message of the remote, in
// one pass. When it is a response with a complete tools/call result, it
// returns the response's id and the mcp.CallToolResult the typed client
// would have built from it, with the structured content as bytes only
// (RawStructuredContent, and StructuredContent holding the same
// json.RawMessage) instead of a map. Otherwise it returns false, and
// mcp-go must read data: a notification or a request of the remote, an
// error, a result that asks for more input, or one the typed client would
// fail on or read differently.
func decodeRemoteMessage(data []byte) (json.RawMessage, *mcp.CallToolResult, bool) {
	if id, res, ok := scanRemoteMessage(data); ok {
		return id, res, true
	}
	return unmarshalRemoteMessage(data)
}

// unmarshalRemoteMessage is decodeRemoteMessage with encoding/json: the
// reference of its fast path, and the way for what that does not take.
func unmarshalRemoteMessage(data []byte) (json.RawMessage, *mcp.CallToolResult, bool) {
	var m remoteMessage
	if json.Unmarshal(data, &m) != nil || m.Method != nil || (m.Error != nil && string(m.Error) != "null") || !plainID(m.ID) || m.Result == nil {
		return nil, nil, false
	}
	// Decoded as mcp-go does, in two steps: a value decoded into twice
	// (a key that comes twice) is merged otherwise in one.
	var r remoteResult
	if json.Unmarshal(m.Result, &r) != nil || r.Content == nil || r.ResultType == mcp.ResultTypeInputRequired || len(r.InputRequests) > 0 {
		return nil, nil, false // "content is missing", or a multi-round-trip step
	}
	content := make([]mcp.Content, len(r.Content))
	for i, item := range r.Content {
		c, err := mcp.UnmarshalContent(item)
		if err != nil {
			return nil, nil, false
		}
		content[i] = c
	}
	return m.ID, r.build(content), true
}

// build returns the mcp.CallToolResult of r with content.
func (r *remoteResult) build(content []mcp.Content) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		Result:               mcp.Result{Meta: r.Meta, ResultType: r.ResultType},
		MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: r.RequestState},
		IsError:              r.IsError,
	}
	if len(content) > 0 {
		res.Content = content // mcp-go leaves none as nil
	}
	if len(r.Structured) > 0 {
		res.RawStructuredContent = r.Structured
		if string(r.Structured) != "null" {
			// The same bytes for what reads StructuredContent (mcp-go's
			// output schema validation): a json.RawMessage marshals as
			// itself.
			res.StructuredContent = r.Structured
		}
	}
	return res
}

// plainID reports whether id is a JSON-RPC id mcp-go reads: a number or a
// string.
func plainID(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
}

// stubMessage is the response mcp-go reads in place of one taken: the same
// id, the stub result.
func stubMessage(id json.RawMessage) []byte {
	b := make([]byte, 0, len(id)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, rawStub...)
	return append(b, '}')
}

// take is the lean path's hook in the HTTP transport: data is one JSON-RPC
// message on the response to c's request. When it is the response to a
// forwarded call, with a result the lean decode takes, take keeps the
// result and returns the message to pass on to mcp-go instead; otherwise
// nil, and mcp-go reads data. Only the first response is taken.
func (c *remoteCall) take(data []byte) []byte {
	if c == nil || !c.raw {
		return nil
	}
	c.mu.Lock()
	done := c.taken != nil
	c.mu.Unlock()
	if done {
		return nil
	}
	if c.shed != nil {
		if tokens := c.shed(data); tokens > 0 {
			c.mu.Lock()
			c.shedded = tokens
			c.mu.Unlock()
		}
	}
	id, res, ok := decodeRemoteMessage(data)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taken != nil {
		return nil
	}
	c.taken = res
	return stubMessage(id)
}

// shedTokens returns the tokens of the _meta take dropped, or 0.
func (c *remoteCall) shedTokens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shedded
}

// result returns the result take kept, if any.
func (c *remoteCall) result() *mcp.CallToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taken
}

// rawBody is the JSON body of the response to a forwarded call: it reads
// src whole (src bounds it), and passes on what call.take makes of it.
type rawBody struct {
	src  io.ReadCloser
	call *remoteCall
	size int64 // the Content-Length sent, or -1
	r    *bytes.Reader
	err  error
}

func (b *rawBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		var buf bytes.Buffer
		if b.size > 0 {
			// One allocation when the length is sent, but not more than
			// a small response is worth when it lies (with no limit).
			buf.Grow(int(min(b.size, 64<<20)) + bytes.MinRead)
		}
		if _, b.err = buf.ReadFrom(b.src); b.err != nil {
			return 0, b.err
		}
		data := buf.Bytes()
		if out := b.call.take(data); out != nil {
			data = out
		}
		b.r = bytes.NewReader(data)
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *rawBody) Close() error { return b.src.Close() }
