package lro_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

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

// Template output is bounded at New: 2,000 actions {{printf "%999999d" 1}}
// in an override made lro.New allocate 2.5 GiB before it was killed. A
// template that prints past tmpl.MaxOutput (64 KiB) fails New with an
// error naming it.
func TestTemplateOutputBoundedAtNew(t *testing.T) {
	for name, text := range map[string]string{
		"wide":        strings.Repeat(`{{printf "%999999d" 1}}`, 2000),
		"many":        strings.Repeat(`{{printf "%60000d" 1}}`, 2000),
		"long values": strings.Repeat(`{{print "`+strings.Repeat("x", 1000)+`"}}`, 100),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := lro.DefaultConfig()
			cfg.OutputDir = t.TempDir()
			_, err := lro.New(cfg, lro.WithTemplates(fstest.MapFS{lro.ShellGuidanceTemplate: {Data: []byte(text)}}))
			require.Error(t, err, "New refuses a template that prints past the bound")
			assert.Contains(t, err.Error(), lro.ShellGuidanceTemplate, "the error names the template")
			assert.Contains(t, err.Error(), "65536", "and the bound")
		})
	}
}
