package lro_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigMatchesSpec(t *testing.T) {
	cfg := lro.DefaultConfig()
	assert.True(t, cfg.IsEnabled())
	assert.Equal(t, 1600, cfg.ThresholdTokens)
	assert.Equal(t, int64(3600), cfg.TTLSeconds)
	assert.Equal(t, "", cfg.OutputDir)
	assert.Equal(t, "atlatl", cfg.FilePrefix)
	require.NoError(t, cfg.Validate())
}

func TestConfigDecodesOverDefaults(t *testing.T) {
	cfg := lro.DefaultConfig()
	require.NoError(t, json.Unmarshal([]byte(`{"threshold_tokens": 800, "output_dir": "/srv/lro"}`), &cfg))
	assert.Equal(t, 800, cfg.ThresholdTokens)
	assert.Equal(t, "/srv/lro", cfg.OutputDir)
	assert.True(t, cfg.IsEnabled(), "keys the section leaves out keep their defaults")
	assert.Equal(t, int64(3600), cfg.TTLSeconds)
}

func TestValidateNamesKeyAndValue(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*lro.Config)
		key    string
		value  string
	}{
		{func(c *lro.Config) { c.ThresholdTokens = -5 }, "threshold_tokens", "-5"},
		{func(c *lro.Config) { c.TTLSeconds = -1 }, "ttl_seconds", "-1"},
		{func(c *lro.Config) { c.Delivery = "pointer" }, "delivery", "pointer"},
		{func(c *lro.Config) { c.SessionBudgetTokens = -1 }, "session_budget_tokens", "-1"},
		{func(c *lro.Config) { c.FilePrefix = "../etc" }, "file_prefix", "../etc"},
		{func(c *lro.Config) { c.FilePrefix = "a-b" }, "file_prefix", "a-b"},
		{func(c *lro.Config) { c.OutputDir = "a\x00b" }, "output_dir", "a\x00b"},
	} {
		cfg := lro.DefaultConfig()
		tc.mutate(&cfg)
		err := cfg.Validate()
		var ce *lro.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", cfg)
		assert.Equal(t, tc.key, ce.Key)
		assert.Equal(t, tc.value, ce.Value)
		assert.Contains(t, err.Error(), tc.key)
		_, err = lro.New(cfg)
		assert.ErrorAs(t, err, &ce, "New validates too")
	}
}

func TestApplyEnv(t *testing.T) {
	t.Setenv("ATLATL_PROMPT__OFFLOAD__ENABLED", "false")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", " 3200 ")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__TTL_SECONDS", "60")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR", "/var/tmp/lro")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__DELIVERY", "compact")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__SESSION_BUDGET_TOKENS", "20000")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__MAX_DIR_BYTES", "5000000")
	cfg := lro.DefaultConfig()
	require.NoError(t, cfg.ApplyEnv(""))
	assert.Equal(t, lro.Config{Enabled: lro.Bool(false), ThresholdTokens: 3200, TTLSeconds: 60, OutputDir: "/var/tmp/lro", FilePrefix: "atlatl",
		Delivery: lro.DeliveryCompact, SessionBudgetTokens: 20000, MaxDirBytes: 5000000}, cfg)
}

func TestApplyEnvCustomPrefix(t *testing.T) {
	t.Setenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "1")
	t.Setenv("MYAPP_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "999")
	cfg := lro.DefaultConfig()
	require.NoError(t, cfg.ApplyEnv("MYAPP"))
	assert.Equal(t, 999, cfg.ThresholdTokens)
}

func TestApplyEnvMalformedIsNamedError(t *testing.T) {
	for name, value := range map[string]string{
		"ATLATL_PROMPT__OFFLOAD__ENABLED":          "yes please",
		"ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS": "16k",
		"ATLATL_PROMPT__OFFLOAD__TTL_SECONDS":      "1h",
		"ATLATL_PROMPT__OFFLOAD__DELIVERY":         "pointer",
		"ATLATL_PROMPT__OFFLOAD__MAX_DIR_BYTES":    "1GiB",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			cfg := lro.DefaultConfig()
			before := cfg
			err := cfg.ApplyEnv("")
			var ce *lro.ConfigError
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, name, ce.Key)
			assert.Equal(t, value, ce.Value)
			assert.True(t, strings.Contains(err.Error(), name))
			assert.Equal(t, before, cfg, "no silent default: nothing is changed")
		})
	}
}

func TestConfigLiteralTakesDefaults(t *testing.T) {
	// A literal that leaves Enabled out offloads: zero fields are defaults.
	o, err := lro.New(lro.Config{ThresholdTokens: 2000, OutputDir: t.TempDir()}, lro.WithoutJanitor())
	require.NoError(t, err)
	defer o.Close()
	cfg := o.Config()
	assert.True(t, cfg.IsEnabled())
	assert.Equal(t, 2000, cfg.ThresholdTokens)
	assert.Equal(t, int64(lro.DefaultTTLSeconds), cfg.TTLSeconds)
	assert.Equal(t, lro.DefaultFilePrefix, cfg.FilePrefix)
	assert.Equal(t, lro.DeliveryDescriptor, cfg.Delivery)

	out, err := o.Offload(t.Context(), lro.ResultSet{Operation: "recall", Records: memories(t, 40, lro.DetailFull)})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action)

	off, err := lro.New(lro.Config{Enabled: lro.Bool(false), OutputDir: t.TempDir()}, lro.WithoutJanitor())
	require.NoError(t, err)
	defer off.Close()
	assert.False(t, off.Config().IsEnabled(), "only an explicit false disables")
}

// TestNewAppliesTheEnvironment: New applies the documented variables over
// the Config it is given (code first, then the environment), refuses a
// malformed one by name, and WithoutEnv turns that off.
func TestNewAppliesTheEnvironment(t *testing.T) {
	t.Setenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "3200")
	t.Setenv("ATLATL_PROMPT__OFFLOAD__DELIVERY", "compact")
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	cfg.ThresholdTokens = 800 // the code's value; the environment has the last word

	o, err := lro.New(cfg, lro.WithoutJanitor())
	require.NoError(t, err)
	defer o.Close()
	assert.Equal(t, 3200, o.Config().ThresholdTokens)
	assert.Equal(t, lro.DeliveryCompact, o.Config().Delivery)

	o2, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithoutEnv())
	require.NoError(t, err)
	defer o2.Close()
	assert.Equal(t, 800, o2.Config().ThresholdTokens)

	t.Setenv("MYAPP_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "999")
	o3, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithEnvPrefix("MYAPP"))
	require.NoError(t, err)
	defer o3.Close()
	assert.Equal(t, 999, o3.Config().ThresholdTokens)

	t.Setenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "16k")
	_, err = lro.New(cfg, lro.WithoutJanitor())
	var ce *lro.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", ce.Key)
}

// TestEnabledIsCopied: New keeps its own copy of Config.Enabled. It kept
// the caller's pointer, so flipping the caller's bool afterwards turned
// offloading off, unsynchronised; and so could the Config it returns.
func TestEnabledIsCopied(t *testing.T) {
	on := true
	cfg := lro.DefaultConfig()
	cfg.Enabled = &on
	cfg.OutputDir = t.TempDir()
	o, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithoutEnv())
	require.NoError(t, err)
	defer o.Close()
	on = false
	*o.Config().Enabled = false
	assert.True(t, o.Config().IsEnabled())
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailFull)})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action)
}

// TestZeroIsTheDefault: one rule for every number of Config and the
// options: zero takes the default, a negative value means none. A literal
// Config had no quota while DefaultConfig had 1 GiB; WithResourceMaxBytes(0)
// kept its default while WithMaxFileBytes(0) meant no cap.
func TestZeroIsTheDefault(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { *c = lro.Config{OutputDir: c.OutputDir} })
	assert.Equal(t, int64(lro.DefaultMaxDirBytes), o.Config().MaxDirBytes, "a literal gets the quota DefaultConfig has")
	o = newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = -1 })
	assert.Equal(t, int64(-1), o.Config().MaxDirBytes, "negative: no quota")

	recs := memories(t, 100, lro.DetailFull) // ~70 KB
	for name, tc := range map[string]struct {
		opt  lro.Option
		want lro.Action
	}{
		"file cap 0 is the default (256 MiB)": {lro.WithMaxFileBytes(0), lro.Offloaded},
		"file cap 10 KB":                      {lro.WithMaxFileBytes(10_000), lro.Truncated},
		"file cap -1 is none":                 {lro.WithMaxFileBytes(-1), lro.Offloaded},
		"result cap 0 is the file cap":        {lro.WithMaxResultBytes(0), lro.Offloaded},
	} {
		t.Run(name, func(t *testing.T) {
			o := newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS("/lro")), tc.opt)
			out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.Action, out.Warning)
		})
	}
	// The free-space reserve: 0 keeps 5%, -1 none.
	for n, want := range map[int64]lro.Action{0: lro.Truncated, -1: lro.Offloaded} {
		mem := lrotest.NewMemFS("/lro")
		mem.SetDiskSpace(1<<20, 100<<20) // 1 MiB free of 100: under 5%
		o := newOffloader(t, nil, lro.WithFS(mem), lro.WithMinFreeBytes(n))
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		assert.Equal(t, want, out.Action, "WithMinFreeBytes(%d): %s", n, out.Warning)
	}
}

// TestEnvRangeErrorNamesTheVariable (issue 39.7): a value out of range
// that came from the environment is refused naming the variable the
// operator set, not the key of Config; set in code, the key.
func TestEnvRangeErrorNamesTheVariable(t *testing.T) {
	for name, value := range map[string]string{
		"ATLATL_PROMPT__OFFLOAD__TTL_SECONDS":           "-5",
		"ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS":      "-1",
		"ATLATL_PROMPT__OFFLOAD__SESSION_BUDGET_TOKENS": "-3",
		"ATLATL_PROMPT__OFFLOAD__FILE_PREFIX":           "a/b",
		"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR":            "nostore://bucket/x",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := lro.New(lro.DefaultConfig(), lro.WithoutJanitor())
			var ce *lro.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, name, ce.Key)
			assert.Equal(t, value, ce.Value)
			assert.Contains(t, err.Error(), name)
		})
	}
	cfg := lro.DefaultConfig()
	cfg.TTLSeconds = -5
	_, err := lro.New(cfg, lro.WithoutJanitor(), lro.WithoutEnv())
	var ce *lro.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ttl_seconds", ce.Key, "set in code: the key")
}

// TestNegativeMaxDirBytesIsNoQuota (issue 39.7): any negative quota is
// none, as docs/configuration.md says, not -1 only; a small one is a quota.
func TestNegativeMaxDirBytesIsNoQuota(t *testing.T) {
	recs := memories(t, 100, lro.DetailFull) // ~70 KB
	for value, want := range map[string]lro.Action{"-2": lro.Offloaded, "10000": lro.Truncated} {
		t.Setenv("ATLATL_PROMPT__OFFLOAD__MAX_DIR_BYTES", value)
		o, err := lro.New(lro.DefaultConfig(), lro.WithoutJanitor(), lro.WithFS(lrotest.NewMemFS("/lro")))
		require.NoError(t, err, value)
		out, err := o.Offload(t.Context(), lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		assert.Equal(t, want, out.Action, "MAX_DIR_BYTES=%s: %s", value, out.Warning)
		o.Close()
	}
}

// TestConfigReportsTheDirectoryInUse (issue 39.7): Config().OutputDir is
// the directory the files go to, where descriptors' paths begin; it was
// "" for the default directory.
func TestConfigReportsTheDirectoryInUse(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = "" })
	assert.Equal(t, lro.DefaultOutputDir(), o.Config().OutputDir)
	assert.True(t, strings.HasPrefix(o.Config().OutputDir, tmp+"/lro-"), o.Config().OutputDir)
	out, err := o.Offload(t.Context(), lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, out.Warning)
	assert.Equal(t, o.Config().OutputDir, filepath.Dir(out.Response.FilePath))

	t.Chdir(tmp)
	o = newOffloader(t, func(c *lro.Config) { c.OutputDir = "rel" })
	assert.Equal(t, filepath.Join(tmp, "rel"), o.Config().OutputDir, "a relative directory, made absolute")
	o = newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS("/mem/lro")))
	assert.Equal(t, "/mem/lro", o.Config().OutputDir, "WithFS: the FS's directory")
}
