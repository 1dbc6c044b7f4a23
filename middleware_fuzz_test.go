package lro_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
)

// FuzzMiddlewareResult sends arbitrary tool results through the mcp-go
// middleware, as text and as structured content, under a threshold low
// enough that most are offloaded: no panic, no error, no temporary file
// left; a result is passed through untouched or replaced by a descriptor
// whose file holds every record (every line of a text, every element of
// an array) as a valid JSON line, or by the truncated fallback.
//
//	go test -run '^$' -fuzz FuzzMiddlewareResult -fuzztime 5m
func FuzzMiddlewareResult(f *testing.F) {
	for _, seed := range []string{
		"", "\n", "\r\n\r\n", "plain text\nover two lines\r\n",
		`[1,2,3]`, `[{"score":0.5,"memory":{"id":"a"}},{"score":1,"memory":{"id":"b"}}]`,
		`{"results":[{"id":1},{"id":2}],"total":2}`, `{"a":{"b":{"c":{"d":[1,2]}}}}`,
		`{"next_cursor":"x","items":[1]}`, `"a string\nwith lines"`, `{"log":"x\ny\n"}`,
		`[` + strings.Repeat(`"\u2028\u0000<&>",`, 40) + `0]`, "\xff\xfe invalid utf-8 \xc0",
		`{"` + strings.Repeat("k", 300) + `":[` + strings.Repeat(`{"x":1},`, 30) + `{}]}`,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	dir := f.TempDir()
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	cfg.ThresholdTokens = 40
	o, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	if err != nil {
		f.Fatal(err)
	}
	defer o.Close()
	f.Fuzz(func(t *testing.T, payload string, structured bool) {
		res := mcp.NewToolResultText(payload)
		if structured && json.Valid([]byte(payload)) {
			res.StructuredContent = json.RawMessage(payload)
		}
		out := serveDump(t, o, res)
		if len(out.Content) == 0 {
			t.Fatal("no content")
		}
		checkNoTemp(t, dir)
		text, _ := out.Content[0].(mcp.TextContent)
		var d lro.OffloadResponse
		if out == res || json.Unmarshal([]byte(text.Text), &d) != nil || !d.Offloaded {
			return // passed through, or truncated
		}
		lines := fileLines(t, d.FilePath)
		if len(lines)-1 != d.Summary.Count {
			t.Fatalf("summary count %d, file has %d records", d.Summary.Count, len(lines)-1)
		}
		for i, l := range lines {
			if !json.Valid(l) {
				t.Fatalf("line %d is not JSON: %q", i+1, l)
			}
		}
		if d.Section == "" && len(d.Sections) == 0 {
			checkRecords(t, payload, lines[1:])
		}
		os.Remove(d.FilePath)
		for _, s := range d.Sections {
			os.Remove(s.FilePath)
		}
	})
}

// checkRecords checks that the records of a result that was one set are
// all there: each line of a text, each element of an array.
func checkRecords(t *testing.T, payload string, records [][]byte) {
	t.Helper()
	var elements []json.RawMessage
	switch trimmed := strings.TrimSpace(payload); {
	case json.Unmarshal([]byte(payload), &elements) == nil && strings.HasPrefix(trimmed, "["):
		if len(elements) != len(records) {
			t.Fatalf("%d elements, %d records", len(elements), len(records))
		}
	case !json.Valid([]byte(payload)) || !strings.HasPrefix(trimmed, "{") && !strings.HasPrefix(trimmed, "["):
		want := strings.Split(strings.TrimSuffix(payload, "\n"), "\n")
		if len(want) != len(records) {
			t.Fatalf("%d lines, %d records", len(want), len(records))
		}
		for i, r := range records {
			var rec struct {
				Line int    `json:"line"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(r, &rec); err != nil {
				t.Fatal(err)
			}
			var line string // as JSON holds it: invalid UTF-8 is U+FFFD
			q, _ := json.Marshal(strings.TrimSuffix(want[i], "\r"))
			_ = json.Unmarshal(q, &line)
			if rec.Line != i+1 || rec.Text != line {
				t.Fatalf("record %d is %q, want line %d %q", i+1, r, i+1, line)
			}
		}
	}
}

func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}

func checkNoTemp(t *testing.T, dir string) {
	t.Helper()
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(tmps) > 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
}
