package gosdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddResources reads offloaded files through an in-memory session and
// checks the JSON-RPC codes of the errors: the SDK's resource-not-found
// code, with lro's message, for a URI that names no file, and invalid
// params for a file over the read limit.
func TestAddResources(t *testing.T) {
	ctx := context.Background()
	off := newOffloader(t, lro.WithResourceMaxBytes(2048))
	recs := make([]json.RawMessage, 100)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"title":"record %d"}`, i, i))
	}
	out, err := off.Offload(ctx, lro.ResultSet{Operation: "export", Records: recs, Generic: true, Tokens: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	uri := "lro://files/" + filepath.Base(out.Response.FilePath)
	data, err := os.ReadFile(out.Response.FilePath)
	require.NoError(t, err)

	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	gosdk.AddResources(s, off)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.NotNil(t, cs.InitializeResult().Capabilities.Resources)

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri + "/lines/2-3"})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, `{"id":0,"title":"record 0"}`+"\n"+`{"id":1,"title":"record 1"}`+"\n", res.Contents[0].Text)
	assert.Equal(t, "application/jsonl", res.Contents[0].MIMEType)
	// SEP-2549: the SDK's default was cacheScope "public" and ttlMs 0; an
	// offloaded file is one caller's until it expires.
	assert.Equal(t, "private", res.CacheScope, "an offloaded file is one caller's")
	assert.Positive(t, res.TTLMs, "cached until the file expires")
	assert.LessOrEqual(t, res.TTLMs, int(off.Config().TTL().Milliseconds())+1000, "and no longer")

	code := func(err error) int64 {
		var we *jsonrpc.Error
		require.True(t, errors.As(err, &we), "%v", err)
		return we.Code
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	require.Error(t, err)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), code(err))
	assert.Contains(t, err.Error(), fmt.Sprintf("is %d bytes, more than the 2048", len(data)))

	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri + "/lines/0"})
	require.Error(t, err)
	assert.Equal(t, mcp.CodeResourceNotFound, code(err))
	assert.Contains(t, err.Error(), "lines are numbered from 1")
}

// TestReadResourceOverFileLimit: a file over ExtractLimits.MaxFileBytes is
// refused even by lines, as invalid params, like one over the read limit.
func TestReadResourceOverFileLimit(t *testing.T) {
	ctx := context.Background()
	off := newOffloader(t, lro.WithExtractLimits(lro.ExtractLimits{MaxFileBytes: 1000}))
	recs := make([]json.RawMessage, 100)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"title":"record %d"}`, i, i))
	}
	out, err := off.Offload(ctx, lro.ResultSet{Operation: "export", Records: recs, Generic: true, Tokens: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	gosdk.AddResources(s, off)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "lro://files/" + filepath.Base(out.Response.FilePath) + "/lines/1"})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
	assert.Contains(t, err.Error(), "more than the 1000 bytes this server reads of a file")
}
