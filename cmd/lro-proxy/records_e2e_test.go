package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statements is a SQL server's answer (@bytebase/dbhub's shape) to a
// script of thirty statements, statement i with 20+i rows: more than the
// few the records search enters, so only -records finds one's rows.
func statements() string {
	var sts []any
	for i := range 30 {
		rows := make([]any, 20+i)
		for j := range rows {
			rows[j] = map[string]any{"id": j, "statement": i, "status": []string{"delivered", "pending"}[j%2]}
		}
		sts = append(sts, map[string]any{"sql": fmt.Sprintf("SELECT * FROM t%d", i), "rows": rows, "count": len(rows)})
	}
	text, _ := json.Marshal(map[string]any{"success": true, "data": map[string]any{"statements": sts}})
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
	return string(b)
}

// TestProxyRecordsFlag is issue 38.2: -records TOOL=PATH, or its variable,
// names the records of a proxied server's tool, inside an array's element.
func TestProxyRecordsFlag(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		want  string
		count int
	}{
		{"detected", nil, nil, "", 1},
		{"flag", nil, []string{"-records", "statements=data.statements[2].rows"}, "data.statements[2].rows", 22},
		{"variable", []string{recordsEnv + "=other=x, statements=data.statements[7].rows"}, nil, "data.statements[7].rows", 27},
		{"flag over variable", []string{recordsEnv + "=statements=data.statements[7].rows"}, []string{"-records", "statements=data.statements[2].rows"}, "data.statements[2].rows", 22},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(proxyBin, append(append([]string{}, c.args...), "--", os.Args[0])...)
			cmd.Env = append(os.Environ(), append([]string{fakeServerEnv + "=1", "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + t.TempDir()}, c.env...)...)
			cl := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
			cs, err := cl.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			defer cs.Close()
			_, err = cs.ListTools(context.Background(), nil) // the proxy serves the tools its client has seen listed
			require.NoError(t, err)
			d := descriptorOf(t, call(t, cs, "statements", nil))
			if c.want == "" {
				assert.Equal(t, "data.statements", d.Section, "thirty statements are records without -records")
				assert.Equal(t, 30, d.Summary.Count)
				return
			}
			assert.Equal(t, c.want, d.Section)
			assert.Equal(t, c.count, d.Summary.Count)
			var schema struct{ Properties map[string]any }
			require.NoError(t, json.Unmarshal(d.LineSchema, &schema))
			assert.Contains(t, schema.Properties, "status", "the rows' columns")
			res := call(t, cs, "lro_extract", map[string]any{"file_path": d.FilePath, "where": []any{map[string]any{"field": "status", "op": "eq", "value": "delivered"}}, "aggregate": map[string]any{"op": "count"}})
			assert.Contains(t, text(res), fmt.Sprintf(`"matched":%d`, (c.count+1)/2), "a question on the rows: %s", text(res))
		})
	}
}
