package lro_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// TestTemplatesOutsideTheSubsetFailNew checks an override lro cannot run
// fails New with an error naming the file, the line and the construct.
func TestTemplatesOutsideTheSubsetFailNew(t *testing.T) {
	dir := t.TempDir()
	text := "{{.Count}} rows\n{{range .Items}}{{.}}{{end}}"
	require.NoError(t, os.WriteFile(filepath.Join(dir, lro.NativeGuidanceTemplate), []byte(text), 0o600))
	_, err := lro.New(lro.DefaultConfig(), lro.WithTemplates(os.DirFS(dir)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "guidance_native.tmpl:2:")
	assert.Contains(t, err.Error(), "{{range}} is not supported")
}

// TestTemplatesOverrideUseTheSubset checks an override using the subset's
// functions renders through New and a call.
func TestTemplatesOverrideUseTheSubset(t *testing.T) {
	dir := t.TempDir()
	text := `{{if and .Memories (ne .Detail "full")}}{{printf "%d" .Count}} at {{.Detail}}{{else}}other{{end}}{{with .TTL}}, kept {{duration .}}{{end}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, lro.ShellGuidanceTemplate), []byte(text), 0o600))
	o := newOffloader(t, nil, lro.WithTemplates(os.DirFS(dir)))
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	assert.Regexp(t, `^100 at light(, kept .+)?$`, out.Response.Guidance)
}
