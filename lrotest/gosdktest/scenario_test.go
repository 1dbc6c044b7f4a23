package gosdktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/lrotest/gosdktest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestScenario is the design card's "unit-test offload behaviour with an
// in-memory fs", written as a server's author would with the helpers: a
// large result is offloaded, a small one passes, the janitor removes the
// file at its TTL, and lro_extract answers on it.
func TestScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // the janitor's clock is the bubble's: the TTL passes at once
		mem := lrotest.NewMemFS("/tmp/lro")
		cfg := lro.DefaultConfig()
		cfg.TTLSeconds = 60
		off, err := lro.New(cfg, lro.WithFS(mem), lro.WithoutEnv(),
			lro.WithExtractLimits(lro.ExtractLimits{InProcess: true})) // a bubble runs no worker process
		require.NoError(t, err)
		defer off.Close()
		c := gosdktest.Connect(t, memoryServer(off))

		small := c.Call(t, "list_memories", map[string]any{"limit": 3})
		require.Nil(t, small.Descriptor, "3 memories pass inline")
		require.Contains(t, small.Text, `"id":"m0002"`)

		large := c.Call(t, "list_memories", map[string]any{"limit": 500})
		require.NotNil(t, large.Descriptor, "500 memories are offloaded: %.200s", large.Text)
		f, err := lrotest.ReadOffloaded(mem, large.Descriptor.FilePath)
		require.NoError(t, err)
		require.Len(t, f.Records, 500)
		require.Contains(t, string(f.Records[499]), `"id":"m0499"`, "records whole, in order")

		q := c.Call(t, "lro_extract", map[string]any{"file_path": large.Descriptor.FilePath, "query": "length", "slurp": true})
		require.Equal(t, "500\n", q.Text)

		time.Sleep(61 * time.Second)
		synctest.Wait()
		require.Empty(t, mem.Names(), "the janitor removed the file")
	})
}

// memoryServer is the server under test: a memory server of its own
// shape, wired with lro.
func memoryServer(off *lro.Offloader) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1.0.0"}, nil)
	gosdk.Install(s, off)
	gosdk.AddExtractTool(s, off)
	type args struct {
		Limit int `json:"limit"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "list_memories"}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(memories(a.Limit))}}}, nil, nil
	})
	return s
}

// memories returns n memories of the newcomer's shape, as JSON.
func memories(n int) []byte {
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = map[string]any{"id": fmt.Sprintf("m%04d", i), "title": fmt.Sprintf("Memory %d about deployments", i),
			"content":   "The release train leaves on Tuesdays; hotfixes go through the on-call reviewer.",
			"namespace": []string{"work", "home", "travel"}[i%3], "tags": []string{"ops"},
			"created": "2026-01-01T00:00:00Z", "score": 1 - float64(i)/float64(n+1)}
	}
	b, _ := json.Marshal(recs)
	return b
}
