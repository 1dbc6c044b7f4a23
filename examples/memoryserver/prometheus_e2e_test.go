package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// dashboardFile is the Grafana dashboard the repository ships.
var dashboardFile = filepath.Join("..", "..", "deploy", "grafana", "lro-dashboard.json")

// dashboardQueries returns every query of the dashboard's panels, by
// panel title, with Grafana's interval variables replaced as Grafana
// would on a short range.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	q := map[string]string{}
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			expr := strings.NewReplacer("$__rate_interval", "30s", "$__range", "1h").Replace(tg.Expr)
			q[p.Title+" ["+tg.RefID+"]"] = expr
		}
	}
	require.NotEmpty(t, q)
	return q
}

// TestPrometheusScrapesDashboard: a real Prometheus scrapes the example
// server's /metrics while a client offloads results and calls
// lro_extract, and every query of the Grafana dashboard returns data;
// those of what the client did return more than zero. It skips without
// the prometheus binary (Debian's prometheus package; .ci/run installs
// it).
func TestPrometheusScrapesDashboard(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary on PATH (apt-get install prometheus)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the test drives prometheus as a Unix process")
	}
	out := t.TempDir()
	mcpURL := startHTTP(t, out)
	metricsAddr := strings.TrimSuffix(strings.TrimPrefix(mcpURL, "http://"), "/mcp")

	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: memoryserver\n    static_configs:\n      - targets: [%q]\n", metricsAddr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600))
	promAddr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr,
		"--log.level=warn")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// What the dashboard shows: offloads of three tools, lro_extract
	// answers and refusals; twice, with a scrape between, since a rate
	// needs a series' two samples, and the first appears with the first
	// call.
	cs, err := sdkClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL}, nil)
	require.NoError(t, err)
	defer cs.Close()
	drive := func() {
		var file string
		for _, tool := range []string{"recall_memories", "list_memories", "export_memories"} {
			res, err := callSDK(t, cs, tool, map[string]any{"query": "", "limit": 300, "detail": "full"})
			require.NoError(t, err)
			file = sdkDescriptor(t, res).FilePath
		}
		for _, args := range []map[string]any{
			{"file_path": file, "recipe": 1},
			{"file_path": file, "query": "length", "slurp": true},
			{"file_path": filepath.Join(out, "missing.jsonl"), "recipe": 1},
			{"file_path": file, "query": "error(\"refused\")"},
		} {
			_, err := callSDK(t, cs, "lro_extract", args)
			require.NoError(t, err)
		}
	}
	drive()
	for end := time.Now().Add(2 * time.Minute); ; {
		if _, ok := promQuery(t, promAddr, `lro_extract_calls_total{outcome="refused"}`); ok {
			break
		}
		require.True(t, time.Now().Before(end), "prometheus never scraped the server")
		time.Sleep(200 * time.Millisecond)
	}
	drive()

	// Prometheus needs two scrapes after the calls for a rate; it is
	// polled until every query has data (the bound only stops a broken
	// setup from hanging the suite; it asserts nothing about speed).
	queries := dashboardQueries(t)
	driven := []string{"lro_offload_tokens_total", "lro_offloads_total", "lro_extract_calls_total", "lro_offload_duration_seconds", "lro_extract_duration_seconds"}
	undriven := []string{"lro_fallbacks_total", "lro_store_", "lro_files_removed_total", "lro_extract_unisolated_total"}
	var missing []string
	values := map[string]string{}
	for end := time.Now().Add(time.Minute); ; {
		missing = missing[:0]
		for title, expr := range queries {
			v, ok := promQuery(t, promAddr, expr)
			values[title] = v
			positive := ok && !strings.HasPrefix(v, "0 ") && v != "0" && !strings.Contains(v, "NaN")
			needsPositive := false
			for _, m := range driven {
				needsPositive = needsPositive || strings.Contains(expr, m)
			}
			for _, m := range undriven {
				needsPositive = needsPositive && !strings.Contains(expr, m)
			}
			if !ok || needsPositive && !positive {
				missing = append(missing, title)
			}
		}
		if len(missing) == 0 || time.Now().After(end) {
			break
		}
		time.Sleep(time.Second)
	}
	for title, expr := range queries {
		t.Logf("%s\n\t%s\n\t= %s", title, expr, values[title])
	}
	require.Empty(t, missing, "dashboard queries without data")
}

// promQuery runs an instant query and returns its samples as
// "value {labels}" lines, and whether there was at least one.
func promQuery(t *testing.T, addr, expr string) (string, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return "error: " + err.Error(), false // not up yet
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, "success", r.Status, "%s: %s", expr, r.Error)
	var lines []string
	for _, s := range r.Data.Result {
		lines = append(lines, fmt.Sprintf("%v %v", s.Value[1], s.Metric))
	}
	return strings.Join(lines, "; "), len(lines) > 0
}
