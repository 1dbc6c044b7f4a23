package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/internal/e2e"
)

// fakeServerEnv makes the test binary a stdio MCP server (fakeStdioServer).
const fakeServerEnv = "LRO_PROXY_BENCH_SERVER"

// nullRelayEnv makes the test binary a relay that does nothing but copy
// bytes (nullRelay): the floor of any proxy process between a client and
// a stdio server.
const nullRelayEnv = "LRO_PROXY_BENCH_RELAY"

// nullRelay runs the command in its arguments and copies its stdin to the
// command's and the command's stdout to its own, byte for byte, until
// its stdin ends.
func nullRelay() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, nullRelayEnv+"=") })
	in, err := cmd.StdinPipe()
	if err != nil {
		panic(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	go func() { _, _ = io.Copy(os.Stdout, out) }()
	_, _ = io.Copy(in, os.Stdin)
	in.Close()
	_ = cmd.Wait()
}

// fakeStdioServer serves three tools on stdio: "small" answers "ok";
// "records" answers 200 memory-like records (about 120 KB) as one JSON
// text item; "rows" answers 50,000 rows of a table (about 11 MB) so.
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
			result = `{"tools":[{"name":"small","inputSchema":{"type":"object"}},{"name":"records","inputSchema":{"type":"object"}},{"name":"rows","inputSchema":{"type":"object"}},{"name":"statements","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"ok"}]}`
			switch m.Params.Name {
			case "records":
				result = string(records)
			case "rows":
				result = fiftyThousandRows()
			case "statements":
				result = statements()
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
		w.Flush()
	}
}

// fiftyThousandRows is the result of a query of 50,000 rows, as a
// database server returns it: one JSON text item, larger than the 10 MiB
// the TypeScript client takes in one message.
func fiftyThousandRows() string {
	rows := make([]map[string]any, 50_000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "customer": fmt.Sprintf("customer-%05d", i), "region": []string{"emea", "amer", "apac"}[i%3],
			"note": strings.Repeat(fmt.Sprintf("order %d shipped on time. ", i), 6)}
	}
	text, _ := json.Marshal(rows)
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
	return string(b)
}

// lineClient is a minimal stdio MCP client: one request at a time.
type lineClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startLineClient(b *testing.B, env []string, name string, args ...string) *lineClient {
	cmd := exec.Command(name, args...)
	// The proxy's files under $LRO_BENCH_DIR when set (/dev/shm: a file
	// created on this machine's disk alone took 0.15-0.5 ms).
	cmd.Env = append(append(os.Environ(), fakeServerEnv+"=1", "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+benchdata.Dir(b)), env...)
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

// cpu returns the CPU time (user and system) the client's process has
// used so far, from /proc (false where there is none): the proxy's own,
// not its server's.
func (c *lineClient) cpu() (time.Duration, bool) {
	if c == nil {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	// After the command name, in parentheses: state is field 3, utime
	// and stime fields 14 and 15, in clock ticks (100 a second on Linux).
	_, rest, ok := strings.Cut(string(stat), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
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

// baseProxyEnv names another lro-proxy binary (say, one built from an
// earlier commit) that BenchmarkStdioProxy then calls too, in the same
// loop, for a comparison in one run: base-µs/call, base/direct.
const baseProxyEnv = "LRO_PROXY_BENCH_BASE"

// BenchmarkStdioProxy calls a stdio server directly, through a relay
// process that only copies bytes (nullRelay: the floor of any proxy
// process, its two extra pipe hops), and through the lro-proxy process,
// in turn in one loop so that all three see the same load: a small call,
// and 200 records (inline directly and through the relay, offloaded
// through the proxy). It reports each one's time per call and the ratios
// to the direct call. SetBytes is the size of the direct answer.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench 'BenchmarkStdioProxy/go' -benchtime 2000x -count 5 ./cmd/lro-proxy
//	git archive BASE | tar -x -C /tmp/base && (cd /tmp/base && go build -o /tmp/lro-proxy-base ./cmd/lro-proxy)
//	LRO_PROXY_BENCH_BASE=/tmp/lro-proxy-base LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench 'BenchmarkStdioProxy/go' ./cmd/lro-proxy
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
			direct := startLineClient(b, nil, server[0], server[1:]...)
			relay := startLineClient(b, []string{nullRelayEnv + "=1"}, self, server...)
			proxied := startLineClient(b, nil, proxyBin, append([]string{"--"}, server...)...)
			var base *lineClient
			if bin := os.Getenv(baseProxyEnv); bin != "" {
				base = startLineClient(b, nil, bin, append([]string{"--"}, server...)...)
			}
			params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.tool, tc.args)
			if got := proxied.call(b, "tools/call", params); !strings.Contains(string(got), tc.want) {
				b.Fatalf("through the proxy: %.300s", got)
			}
			b.SetBytes(int64(len(direct.call(b, "tools/call", params))))
			b.ReportAllocs()
			var dt, rt, pt, bt time.Duration
			var bytes int
			cpu0 := map[*lineClient]time.Duration{} // the processes /proc tells of
			for _, c := range []*lineClient{relay, proxied, base} {
				if t, ok := c.cpu(); ok {
					cpu0[c] = t
				}
			}
			for b.Loop() {
				t0 := time.Now()
				bytes = len(direct.call(b, "tools/call", params))
				t1 := time.Now()
				relay.call(b, "tools/call", params)
				t2 := time.Now()
				proxied.call(b, "tools/call", params)
				t3 := time.Now()
				if base != nil {
					base.call(b, "tools/call", params)
				}
				dt += t1.Sub(t0)
				rt += t2.Sub(t1)
				pt += t3.Sub(t2)
				bt += time.Since(t3)
			}
			n := float64(b.N)
			// The CPU each process spent a call, which the load of a
			// shared machine does not inflate as it does the wall time.
			cpu := func(c *lineClient, unit string) {
				if t0, ok := cpu0[c]; ok {
					t, _ := c.cpu()
					b.ReportMetric(float64((t-t0).Microseconds())/n, unit)
				}
			}
			cpu(proxied, "proxy-cpu-µs/call")
			cpu(relay, "relay-cpu-µs/call")
			if base != nil {
				b.ReportMetric(float64(bt.Microseconds())/n, "base-µs/call")
				b.ReportMetric(float64(bt)/float64(dt), "base/direct")
				cpu(base, "base-cpu-µs/call")
			}
			b.ReportMetric(float64(dt.Microseconds())/n, "direct-µs/call")
			b.ReportMetric(float64(rt.Microseconds())/n, "relay-µs/call")
			b.ReportMetric(float64(pt.Microseconds())/n, "proxy-µs/call")
			b.ReportMetric(float64(pt)/float64(dt), "proxy/direct")
			b.ReportMetric(float64(rt)/float64(dt), "relay/direct")
			b.ReportMetric(float64(bytes), "direct-bytes")
		})
	}
}
