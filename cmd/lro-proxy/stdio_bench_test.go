package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/e2e"
)

// fakeServerEnv makes the test binary a stdio MCP server (fakeStdioServer).
const fakeServerEnv = "LRO_PROXY_BENCH_SERVER"

// fakeStdioServer serves two tools on stdio: "small" answers "ok";
// "records" answers 200 memory-like records (about 120 KB) as one JSON
// text item.
func fakeStdioServer() {
	var recs []map[string]any
	for i := range 200 {
		recs = append(recs, map[string]any{
			"id": fmt.Sprintf("mem-%04d", i), "namespace": "_semantic", "tags": []string{"bench", fmt.Sprint(i % 7)},
			"created_at": "2026-01-02T03:04:05Z", "content": strings.Repeat(fmt.Sprintf("memory %d says something worth recalling. ", i), 12),
		})
	}
	text, _ := json.Marshal(recs)
	records, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 256<<10)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"small","inputSchema":{"type":"object"}},{"name":"records","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"ok"}]}`
			if m.Params.Name == "records" {
				result = string(records)
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
		w.Flush()
	}
}

// lineClient is a minimal stdio MCP client: one request at a time.
type lineClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startLineClient(b *testing.B, name string, args ...string) *lineClient {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), fakeServerEnv+"=1", "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+b.TempDir())
	in, err := cmd.StdinPipe() // stderr discarded: the servers' banners
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &lineClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c.call(b, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	c.call(b, "tools/list", `{}`)
	return c
}

// call sends a request and returns its answer's line.
func (c *lineClient) call(b *testing.B, method, params string) []byte {
	c.id++
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params); err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprintf(`"id":%d`, c.id)
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("%s: %v", method, err)
		}
		if strings.Contains(string(line[:min(len(line), 64)]), want) || strings.Contains(string(line[max(0, len(line)-64):]), want) {
			return line
		}
	}
}

// BenchmarkStdioProxy calls a stdio server directly and through the
// lro-proxy process, alternating in one loop so both see the same load:
// a small call, and 200 records (inline directly, offloaded through the
// proxy). It reports each side's time per call and their ratio.
func BenchmarkStdioProxy(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// The reference filesystem server (node) reads a file of 200 lines
	// of 600 bytes: 200 line records.
	root := b.TempDir()
	line := strings.Repeat("a line of the file, long enough to matter. ", 14)
	var file strings.Builder
	for i := range 200 {
		fmt.Fprintf(&file, "%d %s\n", i, line)
	}
	if err := os.WriteFile(root+"/200.txt", []byte(file.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool, args, want string
		node                   bool
	}{
		{"go/small", "small", `{}`, `"ok"`, false},
		{"go/offload200", "records", `{}`, `offloaded`, false},
		{"node-filesystem/small", "list_allowed_directories", `{}`, `Allowed`, true},
		{"node-filesystem/offload200", "read_text_file", fmt.Sprintf(`{"path":%q}`, root+"/200.txt"), `offloaded`, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			server := []string{self}
			if tc.node {
				server = []string{e2e.NodeBin(b, "mcp-server-filesystem"), root}
			}
			direct := startLineClient(b, server[0], server[1:]...)
			proxied := startLineClient(b, proxyBin, append([]string{"--"}, server...)...)
			params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.tool, tc.args)
			if got := proxied.call(b, "tools/call", params); !strings.Contains(string(got), tc.want) {
				b.Fatalf("through the proxy: %.300s", got)
			}
			var dt, pt time.Duration
			var bytes int
			for b.Loop() {
				t0 := time.Now()
				bytes = len(direct.call(b, "tools/call", params))
				t1 := time.Now()
				proxied.call(b, "tools/call", params)
				dt += t1.Sub(t0)
				pt += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(dt.Microseconds())/n, "direct-µs/call")
			b.ReportMetric(float64(pt.Microseconds())/n, "proxy-µs/call")
			b.ReportMetric(float64(pt)/float64(dt), "proxy/direct")
			b.ReportMetric(float64(bytes), "direct-bytes")
		})
	}
}
