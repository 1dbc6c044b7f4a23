package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

// fuzzMaxTools is the listing limit of FuzzProxyListing: small enough for
// the fuzzer to cross.
const fuzzMaxTools = 16 << 10

// FuzzProxyListing serves the fuzzer's bytes as the remote's tools/list
// result: the listing path that turns it into the proxy's tool table
// (names, the remote's schemas kept, output schemas widened for the
// client). Whatever the remote lists, nothing panics, a listing larger
// than MaxToolsBytes is refused and leaves the table as it was, the table
// holds only named tools the front server serves (the proxy's own
// lro_extract stays), and the client can list the tools, each output
// schema admitting the descriptor.
//
//	go test -run '^$' -fuzz FuzzProxyListing -fuzztime 3m ./proxy
func FuzzProxyListing(f *testing.F) {
	for _, seed := range []string{
		`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q"}}},"outputSchema":{"type":"object","properties":{"results":{"type":"array"}}}}]}`,
		`{"tools":[{"name":"b","inputSchema":{"type":"object","properties":{"q":{"type":"object","x-mcp-header":"bad header"}}}}]}`,
		`{"tools":[{"name":"","inputSchema":{}},{"name":"lro_extract","inputSchema":{"type":"object"}},{"name":"a"},{"name":"a","description":"twice"}]}`,
		`{"tools":[{"name":"c","inputSchema":{"type":"object"},"outputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"m":{"type":"object"}},"$ref":"#/$defs/m"}}]}`,
		`{"tools":[{"name":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"$ref":"#"}}}]}`,
		`{"tools":[{"name":"e","inputSchema":true,"outputSchema":false}]}`,
		`{"tools":[{"name":"f","inputSchema":{"type":"object"},"outputSchema":{"anyOf":[{"title":"lro offload descriptor"}]}}]}`,
		`{"tools":[{"name":"` + strings.Repeat("n", 300) + `","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"big","description":"` + strings.Repeat("d", 20<<10) + `"}]}`,
		`{"tools":null}`,
		`{"tools":[1,"x",null]}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}

	p := listingProxy(f)
	c, err := client.NewInProcessClient(p.front)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, page []byte) {
		if len(page) > 4*fuzzMaxTools {
			return // the limit is far below; larger inputs only slow the fuzzer
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.syncMu.Lock()
		before := maps.Clone(p.served)
		err := p.applyListing([]json.RawMessage{page})
		after := maps.Clone(p.served)
		p.syncMu.Unlock()

		var lim *RemoteLimitError
		switch {
		case len(page) > fuzzMaxTools:
			if !errors.As(err, &lim) || lim.Limit != "MaxToolsBytes" {
				t.Fatalf("a listing of %d bytes was not refused at MaxToolsBytes: %v", len(page), err)
			}
			fallthrough
		case err != nil:
			if !maps.Equal(before, after) {
				t.Fatalf("a refused listing (%v) changed the tools served", err)
			}
		}

		front := p.front.ListTools()
		if front[lro.ExtractToolName] == nil {
			t.Fatal("the proxy's own lro_extract is gone")
		}
		for name := range after {
			if name == "" || name == lro.ExtractToolName {
				t.Fatalf("the table holds %q", name)
			}
			if front[name] == nil {
				t.Fatalf("the table holds %q, which the front server does not serve", name)
			}
		}
		if len(front) != len(after)+1 {
			t.Fatalf("the front server serves %d tools, the table holds %d and lro_extract", len(front), len(after))
		}

		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("the client cannot list the tools: %v", err)
		}
		for _, tool := range res.Tools {
			if tool.Name == lro.ExtractToolName || len(tool.RawOutputSchema) == 0 {
				continue
			}
			if !json.Valid(tool.RawOutputSchema) {
				t.Fatalf("%s: the output schema sent is not JSON: %.200s", tool.Name, tool.RawOutputSchema)
			}
			if !strings.Contains(string(tool.RawOutputSchema), `"lro offload descriptor"`) {
				t.Fatalf("%s: the output schema sent does not admit the descriptor: %.300s", tool.Name, tool.RawOutputSchema)
			}
		}
	})
}

// listingProxy returns a Proxy with no remote, for its listing path: every
// tool offloaded, lro_extract served, MaxToolsBytes fuzzMaxTools.
func listingProxy(t testing.TB) *Proxy {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	off, err := lro.New(cfg, lro.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { off.Close() })
	p := &Proxy{
		cfg:    Config{Remote: "http://remote.invalid/mcp", Extract: true},
		off:    off,
		log:    slog.New(slog.DiscardHandler),
		warned: map[string]bool{},
		served: map[string]string{},
		lim:    proxyLimits{tools: fuzzMaxTools},
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	t.Cleanup(p.cancel)
	p.front = server.NewMCPServer("lro-proxy", "0", server.WithToolCapabilities(true), server.WithRecovery(), mcpgo.ServerOption(off))
	mcpgo.AddExtractTool(p.front, off)
	return p
}
