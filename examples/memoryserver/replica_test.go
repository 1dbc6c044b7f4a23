package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two replicas of the memory server behind one bucket, as behind a load
// balancer: a result offloaded by one is followed on the other, by the
// official Go SDK client over streamable HTTP with the 2026-07-28
// (stateless) protocol. The bucket is an S3-compatible server on
// loopback, reached over HTTP by the AWS SDK through gocloud.

// startS3 starts an in-memory S3 server with the bucket "replicas" and
// returns it; the AWS SDK finds test credentials in its standard
// environment chain. It skips the test where loopback cannot be used.
func startS3(t *testing.T) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on loopback for the S3 server: %v", err)
	}
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("replicas"))
	srv := httptest.NewUnstartedServer(gofakes3.New(backend, gofakes3.WithoutVersioning()).Server())
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return srv
}

// replica is one memory server, built as main builds it from the
// environment, serving streamable HTTP.
type replica struct {
	url string
	off *lro.Offloader

	mu      sync.Mutex
	log     bytes.Buffer
	failed  []lro.WriteFailedEvent
	expired []lro.FileExpiredEvent
}

func (r *replica) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.Write(p)
}

func (r *replica) events() (failed []lro.WriteFailedEvent, expired []lro.FileExpiredEvent, log string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(failed, r.failed...), append(expired, r.expired...), r.log.String()
}

func startReplica(t *testing.T) *replica {
	t.Helper()
	r := &replica{}
	cfg := lro.DefaultConfig()
	require.NoError(t, cfg.ApplyEnv(""))
	logger := slog.New(slog.NewTextHandler(r, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hooks := lro.Hooks{
		OnWriteFailed: func(e lro.WriteFailedEvent) { r.mu.Lock(); r.failed = append(r.failed, e); r.mu.Unlock() },
		OnFileExpired: func(e lro.FileExpiredEvent) { r.mu.Lock(); r.expired = append(r.expired, e); r.mu.Unlock() },
	}
	off, err := lro.New(cfg, append(memserver.Policies(), lro.WithLogger(logger), lro.WithName("memoryserver"), lro.WithHooks(hooks))...)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	r.off = off
	s := memserver.New(memstore.New(memstore.Generate(500, 1)), off)
	mcpgo.AddExtractTool(s, off)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.MaxBytesHandler(server.NewStreamableHTTPServer(s), maxRequestBytes))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/mcp"
	return r
}

// connect returns a session of the official SDK's client, which speaks
// the stateless 2026-07-28 protocol by default.
func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := sdkClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// storeEnv points the offloader's output_dir at the bucket, as an
// operator would: through the environment.
func storeEnv(t *testing.T, s3 *httptest.Server, ttl int) string {
	u := "s3://replicas/team/lro?region=us-east-1&use_path_style=true&endpoint=" + s3.URL
	t.Setenv("ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR", u)
	t.Setenv("ATLATL_PROMPT__OFFLOAD__TTL_SECONDS", fmt.Sprint(ttl))
	return u
}

func TestReplicasShareOffloadsThroughS3(t *testing.T) {
	s3 := startS3(t)
	storeEnv(t, s3, 3600)
	a, b := startReplica(t), startReplica(t)
	csA, csB := connect(t, a.url), connect(t, b.url)

	res, err := callSDK(t, csA, "recall_memories", map[string]any{"query": "security", "limit": 200, "detail": "full"})
	require.NoError(t, err)
	d := sdkDescriptor(t, res)
	assert.Regexp(t, `^s3://replicas/team/lro/atlatl-recall-[0-9A-Z]{26}\.jsonl$`, d.FilePath)
	assert.Contains(t, d.Guidance, "lro_extract", "a bucket is out of a shell's reach: native guidance")
	assert.Len(t, d.JQRecipes, 10, "jq_recipes stay")
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]

	// Replica B, which did not write it, follows it.
	res, err = callSDK(t, csB, "lro_extract", map[string]any{"file_path": d.FilePath, "recipe": 6})
	require.NoError(t, err)
	text := res.Content[0].(*mcp.TextContent).Text
	require.False(t, res.IsError, text)
	assert.Contains(t, text, "_semantic", "recipe 6 counts the memories by namespace")

	ctx := context.Background()
	rr, err := csB.ReadResource(ctx, &mcp.ReadResourceParams{URI: "lro://files/" + name + "/lines/1-2"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	lines := strings.Split(strings.TrimSuffix(rr.Contents[0].Text, "\n"), "\n")
	require.Len(t, lines, 2)
	var header lro.OffloadHeader
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &header))
	assert.Equal(t, d.Summary.Count, header.Count)
	assert.Equal(t, "full", string(header.Detail))

	// A name that is not this offloader's, on the same bucket, is refused.
	res, err = callSDK(t, csB, "lro_extract", map[string]any{"file_path": "s3://replicas/other/" + name, "recipe": 1})
	require.NoError(t, err)
	assert.True(t, res.IsError)

	// The store stops mid-run: the next large result falls back inline,
	// truncated, with the warning, the event and the log line.
	s3.Close()
	res, err = callSDK(t, csB, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": "full"})
	require.NoError(t, err, "never a failed call")
	require.False(t, res.IsError)
	var all strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			all.WriteString(tc.Text)
		}
	}
	assert.Contains(t, all.String(), "offloading failed")
	assert.Contains(t, all.String(), "truncated")
	assert.NotContains(t, all.String(), `"offloaded":true`)
	failed, _, log := b.events()
	require.Len(t, failed, 1)
	assert.Equal(t, "recall", failed[0].Operation)
	assert.Contains(t, log, "connect")
}

// Every replica runs the janitor on the shared prefix: each deletes the
// files that expire, whoever wrote them, and a follow-up of a deleted
// file on either replica says it expired.
func TestReplicaJanitors(t *testing.T) {
	s3 := startS3(t)
	storeEnv(t, s3, 1)
	a, b := startReplica(t), startReplica(t)
	csA, csB := connect(t, a.url), connect(t, b.url)

	var paths []string
	for _, cs := range []*mcp.ClientSession{csA, csB} {
		res, err := callSDK(t, cs, "recall_memories", map[string]any{"query": "security", "limit": 200, "detail": "full"})
		require.NoError(t, err)
		paths = append(paths, sdkDescriptor(t, res).FilePath)
	}
	// Each replica's janitor deletes the file it wrote when it expires;
	// a sweep (the janitor's rescan) on the other finds nothing left to
	// do, and no error in a file gone under it.
	require.Eventually(t, func() bool {
		_, ea, _ := a.events()
		_, eb, _ := b.events()
		return len(ea) >= 1 && len(eb) >= 1
	}, 10*time.Second, 50*time.Millisecond, "both janitors deleted an expired file")
	for _, r := range []*replica{a, b} {
		_, err := r.off.Sweep(context.Background())
		assert.NoError(t, err)
	}
	for _, p := range paths {
		for _, cs := range []*mcp.ClientSession{csA, csB} {
			res, err := callSDK(t, cs, "lro_extract", map[string]any{"file_path": p, "recipe": 1})
			require.NoError(t, err)
			require.True(t, res.IsError)
			assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "has expired")
		}
	}
	_, ea, logA := a.events()
	_, eb, logB := b.events()
	assert.Len(t, ea, 1, "a file is reported deleted once per replica that deleted it")
	assert.Len(t, eb, 1)
	assert.NotContains(t, logA+logB, "janitor", "no janitor errors")
}
