package lro_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteMem is a MemFS that stands for an object store: its files are
// shown as URLs and are Remote.
type remoteMem struct {
	*lrotest.MemFS
	base string
}

func (r remoteMem) Path(name string) string { return r.base + "/" + name }
func (r remoteMem) Remote() bool            { return true }

// The fake stores registered once for this package's tests: lrotest://
// opens a remoteMem per URL (the last opened is kept for inspection), and
// lrobroken:// fails to open.
var (
	lastStore atomic.Pointer[remoteMem]
	_         = func() int {
		lro.RegisterStore("lrotest", func(_ context.Context, u *url.URL) (lro.FS, error) {
			r := &remoteMem{MemFS: lrotest.NewMemFS("/unused"), base: "lrotest://" + u.Host + u.Path}
			lastStore.Store(r)
			return r, nil
		})
		lro.RegisterStore("LroBroken", func(context.Context, *url.URL) (lro.FS, error) {
			return nil, errors.New("bucket policy forbids this")
		})
		return 0
	}()
)

func TestStoreURLUnregisteredIsConfigError(t *testing.T) {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = "s3://bucket/prefix?region=eu-west-1"
	_, err := lro.New(cfg)
	var ce *lro.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "output_dir", ce.Key)
	assert.Contains(t, err.Error(), `scheme "s3"`)
	assert.Contains(t, err.Error(), `import _ "github.com/mcplro/lro/blobfs"`)
	assert.Contains(t, err.Error(), "lrotest", "the registered schemes are listed")

	// Not store URLs: a Windows drive, a plain path holding "://" late.
	for _, dir := range []string{`C://lro`, "/tmp/a://b"} {
		cfg.OutputDir = dir
		assert.NoError(t, cfg.Validate(), dir)
	}
}

func TestRegisterStoreRefuses(t *testing.T) {
	open := func(context.Context, *url.URL) (lro.FS, error) { return nil, nil }
	assert.Panics(t, func() { lro.RegisterStore("lrotest", open) }, "twice")
	assert.Panics(t, func() { lro.RegisterStore("LROTEST", open) }, "twice, in another case")
	assert.Panics(t, func() { lro.RegisterStore("x", open) }, "a drive letter")
	assert.Panics(t, func() { lro.RegisterStore("1ab", open) }, "not a scheme")
	assert.Panics(t, func() { lro.RegisterStore("okay", nil) }, "nil opener")
	assert.Contains(t, lro.StoreSchemes(), "lrotest")
	assert.Contains(t, lro.StoreSchemes(), "lrobroken")
}

// A store URL from the environment opens the registered store; its
// descriptors point to lro_extract, whose file_path is the object URL,
// followed by any Offloader of the name on that store.
func TestStoreURLOpensRegisteredStore(t *testing.T) {
	t.Setenv("ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR", "lrotest://bucket/team/lro?region=x")
	cfg := lro.DefaultConfig()
	require.NoError(t, cfg.ApplyEnv(""))
	o, err := lro.New(cfg, lro.WithName("store"), lro.WithoutJanitor())
	require.NoError(t, err)
	defer o.Close()
	store := lastStore.Load()
	require.NotNil(t, store)
	assert.Same(t, store.MemFS, o.FS().(*remoteMem).MemFS)

	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 200, lro.DetailLight)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, "%v", out.Err)
	d := out.Response
	assert.Regexp(t, `^lrotest://bucket/team/lro/atlatl-recall-[0-9A-Z]{26}\.jsonl$`, d.FilePath)
	assert.Contains(t, d.Guidance, "lro_extract", "native guidance without AddExtractTool: no shell reaches a store")
	assert.Len(t, d.JQRecipes, 10)

	text, err := o.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	require.NoError(t, err)
	assert.NotEmpty(t, text)

	for _, bad := range []string{
		"lrotest://bucket/other/" + d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:],
		"lrotest://bucket/team/lro/../lro/" + d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:],
		"lrotest:/bucket/team/lro/" + d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:],
		"relative.jsonl",
	} {
		_, err := o.Extract(context.Background(), map[string]any{"file_path": bad, "recipe": 1})
		assert.Error(t, err, bad)
	}
}

// A directory Offloader is unchanged: a URL file_path is not its own.
func TestDirRefusesURLFilePath(t *testing.T) {
	o := newOffloader(t, nil, lro.WithoutJanitor())
	_, err := o.Extract(context.Background(), map[string]any{"file_path": "s3://bucket/lro/atlatl-recall-01ARZ3NDEKTSV4RRFFQ69G5FAV.jsonl", "recipe": 1})
	assert.ErrorContains(t, err, "must be the absolute path")
}

// A store that cannot be opened does not fail New: each offload falls
// back, with a plain warning; the reason, without the URL's query, is in
// the event.
func TestStoreOpenFailureFallsBack(t *testing.T) {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = "lrobroken://bucket/lro?token=hidden"
	var failed atomic.Int32
	o, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithHooks(lro.Hooks{OnWriteFailed: func(lro.WriteFailedEvent) { failed.Add(1) }}))
	require.NoError(t, err)
	defer o.Close()
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 200, lro.DetailLight)})
	require.NoError(t, err)
	assert.Equal(t, lro.Truncated, out.Action)
	// Issue 32.3: not "could not be reached", nor "try again later": the
	// store is set up wrong, and stays so until the operator fixes it.
	assert.Contains(t, out.Warning, "the file store is not set up correctly on this server")
	assert.Contains(t, out.Warning, "calling again will not help; narrow the call to get the rest")
	assert.NotContains(t, out.Warning, "again later")
	assert.ErrorIs(t, out.Err, lro.ErrStoreMisconfigured)
	assert.NotContains(t, out.Warning, "bucket policy forbids this", "the store's own error is for the log")
	assert.NotContains(t, out.Warning, "hidden")
	assert.ErrorContains(t, out.Err, "bucket policy forbids this")
	assert.ErrorContains(t, out.Err, "lrobroken://bucket/lro")
	assert.NotContains(t, out.Err.Error(), "hidden")
	assert.EqualValues(t, 1, failed.Load())
}
