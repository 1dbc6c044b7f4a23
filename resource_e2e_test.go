package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// End-to-end tests of resources/read for offloaded files, through real
// clients over streamable HTTP: each Go client against each host, and the
// TypeScript SDK client.

// resourceLimit is the read limit of these tests: the small file is
// under it, the large one over it.
const resourceLimit = 16 << 10

// resourceFixture is an Offloader serving resources, with one file under
// the read limit and one over it.
type resourceFixture struct {
	off          *lro.Offloader
	small, large string // URIs
	smallData    []byte
	largeData    []byte
}

func newResourceFixture(t *testing.T) *resourceFixture {
	t.Helper()
	f := &resourceFixture{off: newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 100 }, lro.WithResourceMaxBytes(resourceLimit))}
	offload := func(n int) (string, []byte) {
		recs := make([]json.RawMessage, n)
		for i := range recs {
			recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"title":"Ticket %d: the cache is cold","status":"open"}`, i+1, i+1))
		}
		out, err := f.off.Offload(context.Background(), lro.ResultSet{Operation: "tickets", Records: recs, Generic: true})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action)
		return "lro://files/" + filepath.Base(out.Response.FilePath), readFile(t, out.Response.FilePath)
	}
	f.small, f.smallData = offload(50)
	f.large, f.largeData = offload(1000)
	require.Less(t, len(f.smallData), resourceLimit)
	require.Greater(t, len(f.largeData), resourceLimit)
	return f
}

// lines returns lines from to to (numbered from 1) of data, as sed -n
// prints them.
func lines(data []byte, from, to int) string {
	ls := strings.SplitAfter(string(data), "\n")
	return strings.Join(ls[from-1:to], "")
}

// resourceClient is one client's view of a server's resources.
type resourceClient struct {
	read      func(uri string) (text, mime string, err error)
	templates func() []string
	declared  bool // the server declared the resources capability
}

var resourceHosts = []struct {
	name  string
	serve func(t *testing.T, off *lro.Offloader) string
}{
	{"mcp-go", func(t *testing.T, off *lro.Offloader) string {
		s := server.NewMCPServer("resources", "1")
		mcpgo.AddResources(s, off)
		mcpgo.AddExtractTool(s, off)
		return serveHTTP(t, server.NewStreamableHTTPServer(s))
	}},
	{"official", func(t *testing.T, off *lro.Offloader) string {
		s := mcp.NewServer(&mcp.Implementation{Name: "resources", Version: "1"}, nil)
		gosdk.AddResources(s, off)
		gosdk.AddExtractTool(s, off)
		return serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	}},
}

var resourceClients = []struct {
	name    string
	connect func(t *testing.T, url string) resourceClient
}{
	{"go-sdk client", func(t *testing.T, url string) resourceClient {
		c := mcp.NewClient(&mcp.Implementation{Name: "resources", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return resourceClient{
			read: func(uri string) (string, string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					return "", "", err
				}
				require.Len(t, res.Contents, 1)
				assert.Equal(t, uri, res.Contents[0].URI)
				return res.Contents[0].Text, res.Contents[0].MIMEType, nil
			},
			templates: func() []string {
				res, err := cs.ListResourceTemplates(context.Background(), nil)
				require.NoError(t, err)
				var out []string
				for _, tm := range res.ResourceTemplates {
					out = append(out, tm.URITemplate)
				}
				return out
			},
			declared: cs.InitializeResult().Capabilities.Resources != nil,
		}
	}},
	{"mcp-go client", func(t *testing.T, url string) resourceClient {
		c, err := mcpclient.NewStreamableHttpClient(url)
		require.NoError(t, err)
		require.NoError(t, c.Start(context.Background()))
		t.Cleanup(func() { c.Close() })
		init := mcpgomcp.InitializeRequest{}
		init.Params.ClientInfo = mcpgomcp.Implementation{Name: "resources", Version: "1"}
		init.Params.ProtocolVersion = mcpgomcp.ProtocolVersion20251125
		ir, err := c.Initialize(context.Background(), init)
		require.NoError(t, err)
		return resourceClient{
			read: func(uri string) (string, string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				req := mcpgomcp.ReadResourceRequest{}
				req.Params.URI = uri
				res, err := c.ReadResource(ctx, req)
				if err != nil {
					return "", "", err
				}
				require.Len(t, res.Contents, 1)
				tc, ok := res.Contents[0].(mcpgomcp.TextResourceContents)
				require.True(t, ok, "%T", res.Contents[0])
				assert.Equal(t, uri, tc.URI)
				return tc.Text, tc.MIMEType, nil
			},
			templates: func() []string {
				res, err := c.ListResourceTemplates(context.Background(), mcpgomcp.ListResourceTemplatesRequest{})
				require.NoError(t, err)
				var out []string
				for _, tm := range res.ResourceTemplates {
					out = append(out, tm.URITemplate.Raw())
				}
				return out
			},
			declared: ir.Capabilities.Resources != nil,
		}
	}},
}

func TestResourcesEndToEnd(t *testing.T) {
	for _, h := range resourceHosts {
		for _, cl := range resourceClients {
			t.Run(h.name+"/"+cl.name, func(t *testing.T) {
				f := newResourceFixture(t)
				c := cl.connect(t, h.serve(t, f.off))
				assert.True(t, c.declared, "the server declares resources")
				assert.ElementsMatch(t, []string{
					"lro://files/atlatl-{operation}-{id}.jsonl",
					"lro://files/atlatl-{operation}-{id}.jsonl/lines/{range}",
				}, c.templates())

				text, mime, err := c.read(f.small)
				require.NoError(t, err)
				assert.Equal(t, string(f.smallData), text, "exactly the file")
				assert.Equal(t, "application/jsonl", mime)

				_, _, err = c.read(f.large)
				require.Error(t, err)
				assert.Contains(t, err.Error(), fmt.Sprintf("is %d bytes, more than the %d that resources/read returns at once", len(f.largeData), resourceLimit))
				assert.Contains(t, err.Error(), f.large+"/lines/{range}")
				assert.Contains(t, err.Error(), "lro_extract")

				text, _, err = c.read(f.large + "/lines/100-200")
				require.NoError(t, err)
				assert.Equal(t, lines(f.largeData, 100, 200), text)
				text, _, err = c.read(f.large + "/lines/1001-")
				require.NoError(t, err)
				assert.Equal(t, lines(f.largeData, 1001, 1001), text)

				for _, bad := range []string{
					f.small + "/lines/0-3",
					f.small + "/lines/900-",
					strings.Replace(f.small, "atlatl-", "other-", 1),
					strings.Replace(f.small, "lro://files/", "lro://files/../", 1),
					"lro://files/atlatl-tickets-01ARZ3NDEKTSV4RRFFQ69G5FAV.jsonl",
				} {
					_, _, err := c.read(bad)
					assert.Error(t, err, bad)
				}
			})
		}
	}
}

func TestResourcesTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	for _, h := range resourceHosts {
		t.Run(h.name, func(t *testing.T) {
			f := newResourceFixture(t)
			got := ts.RunHTTP(t, h.serve(t, f.off), "resources-ts", []e2e.Step{
				e2e.ReadResource(f.small),
				e2e.ReadResource(f.large),
				e2e.ReadResource(f.large + "/lines/100-200"),
				e2e.ReadResource(f.small + "/lines/900-"),
			})
			contents := func(r e2e.StepResult) (text, mime string) {
				require.True(t, r.OK, r.Error)
				var res struct {
					Contents []struct{ URI, MIMEType, Text string }
				}
				require.NoError(t, json.Unmarshal(r.Result, &res))
				require.Len(t, res.Contents, 1)
				return res.Contents[0].Text, res.Contents[0].MIMEType
			}
			text, mime := contents(got[0])
			assert.Equal(t, string(f.smallData), text)
			assert.Equal(t, "application/jsonl", mime)
			assert.False(t, got[1].OK)
			assert.Contains(t, got[1].Error, fmt.Sprintf("more than the %d that resources/read returns at once", resourceLimit))
			assert.Contains(t, got[1].Error, "/lines/{range}")
			text, _ = contents(got[2])
			assert.Equal(t, lines(f.largeData, 100, 200), text)
			assert.False(t, got[3].OK)
			assert.Contains(t, got[3].Error, "the file has 51 lines")
		})
	}
}

func TestWithoutResourceLinks(t *testing.T) {
	off := newOffloader(t, nil, lro.WithoutResourceLinks())
	s := server.NewMCPServer("resources", "1")
	mcpgo.AddResources(s, off)
	c := connect(t, s)
	_, err := c.ListResourceTemplates(context.Background(), mcpgomcp.ListResourceTemplatesRequest{})
	assert.Error(t, err, "no resources, so no resources capability")
	assert.Empty(t, s.ListResources())

	gs := mcp.NewServer(&mcp.Implementation{Name: "resources", Version: "1"}, nil)
	gosdk.AddResources(gs, off)
	ct, st := mcp.NewInMemoryTransports()
	_, err = gs.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Nil(t, cs.InitializeResult().Capabilities.Resources)
}
