package structqtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Caller calls a tool through a client and returns the text of the
// result's first content item and whether it is a tool error.
type Caller func(t *testing.T, tool string, args map[string]any) (text string, isError bool)

// ExtractTool is lro_extract's name (lro.ExtractToolName; this package
// does not import lro, whose tests import it).
const ExtractTool = "lro_extract"

// Run calls each tool of Tools once through call, which must offload its
// result, then asks each question of Cases of the file it names, and
// compares the answer's first line with the answer computed in Go.
func Run(t *testing.T, call Caller) {
	files := map[string]string{} // tool + "/" + section -> file_path
	for tool := range Tools() {
		text, isErr := call(t, tool, map[string]any{})
		require.False(t, isErr, text)
		var d struct {
			FilePath string `json:"file_path"`
			Section  string `json:"section"`
			Sections []struct {
				Section  string `json:"section"`
				FilePath string `json:"file_path"`
			} `json:"sections"`
		}
		require.NoError(t, json.Unmarshal([]byte(text), &d), "%s is offloaded: %.300s", tool, text)
		require.NotEmpty(t, d.FilePath, tool)
		files[tool+"/"+d.Section] = d.FilePath
		for _, s := range d.Sections {
			files[tool+"/"+s.Section] = s.FilePath
		}
	}
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			path, ok := files[c.Tool+"/"+c.Section]
			require.True(t, ok, "a file of %s/%s among %v", c.Tool, c.Section, files)
			args := map[string]any{"file_path": path}
			for k, v := range c.Args {
				args[k] = v
			}
			text, isErr := call(t, ExtractTool, args)
			if c.WantErr != "" {
				require.True(t, isErr, text)
				assert.Contains(t, text, c.WantErr)
				return
			}
			require.False(t, isErr, text)
			first, rest, _ := strings.Cut(text, "\n")
			assert.NotContains(t, rest, "showing", "nothing cut")
			assert.Equal(t, normal(t, mustJSON(c.Want)), normal(t, first))
		})
	}
}

// normal decodes JSON with its numbers as written, for a comparison in
// which 51736.00 is not 51735.99999999993.
func normal(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), s)
	return v
}
