package lro

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/store"
)

// The defaults, in one place: what a Config field or an option left zero
// (or not given) means.
const (
	// The specification's [prompt.offload] section.
	DefaultThresholdTokens = 1600
	DefaultTTLSeconds      = 3600
	DefaultFilePrefix      = "atlatl"
	// DefaultEnvPrefix is the prefix of the environment variables [New]
	// and [Config.ApplyEnv] read: ATLATL_PROMPT__OFFLOAD__ENABLED and so on.
	DefaultEnvPrefix = "ATLATL"

	// DefaultMaxDirBytes is the quota of DefaultConfig: enough for
	// thousands of offloaded results, small enough that a flood of calls
	// cannot fill a temporary file system.
	DefaultMaxDirBytes = 1 << 30
	// DefaultMaxFileBytes is the per-file cap unless [WithMaxFileBytes]
	// says otherwise: 256 MiB, the most lro_extract reads by default,
	// since a larger file could be read only with a shell.
	DefaultMaxFileBytes = 256 << 20
	// DefaultSchemaVersion is the MIF schema version written to headers
	// unless [WithSchemaVersion] or ResultSet.SchemaVersion says otherwise.
	DefaultSchemaVersion = "1.0"
	// DefaultPreviewTokens is the preview budget of DeliveryCompact: a few
	// records, enough that a model sees what the file holds instead of
	// imagining it.
	DefaultPreviewTokens = 200
	// DefaultResourceMaxBytes is the most resources/read returns at once,
	// the whole of a file or a range of its lines, unless
	// [WithResourceMaxBytes] says otherwise.
	DefaultResourceMaxBytes = 1 << 20

	// DefaultExtractMemoryBudget is the default of
	// ExtractLimits.MemoryBudget: lro_extract's memory, in this process
	// and its workers together.
	DefaultExtractMemoryBudget = extract.DefaultMemoryBudget
	// DefaultExtractCacheBytes is how much memory lro_extract's decoded
	// records take at most by default (see ExtractLimits.CacheBytes), an
	// estimate of their decoded size, in this process when queries run
	// here, and at least in each worker process (which keeps a sixth of
	// its memory by default: 64 MiB).
	DefaultExtractCacheBytes = extract.DefaultCacheBytes
)

// Config is the [prompt.offload] section of the specification.
//
// A field left at its zero value takes its default, so that a literal
// such as lro.Config{ThresholdTokens: 2000} offloads with the other
// defaults; [New] fills them in, and [Offloader.Config] shows the result.
// One rule, as for the options: zero is the default, and a negative
// MaxDirBytes means no quota. SessionBudgetTokens's default is none.
//
// Its tags let you decode the section with your own TOML, JSON or YAML
// decoder. Start from [DefaultConfig] so that keys the file leaves out keep
// their defaults:
//
//	cfg := lro.DefaultConfig()
//	err := toml.Unmarshal(data["prompt"]["offload"], &cfg)
type Config struct {
	// Enabled turns offloading on or off. Nil, the zero value, means on,
	// the specification's default: only an explicit false, as in a
	// decoded "enabled = false", keeps every result inline.
	Enabled *bool `json:"enabled,omitempty" toml:"enabled,omitempty" yaml:"enabled,omitempty"`
	// ThresholdTokens is the largest estimated size, in tokens, of a result
	// set that stays inline. Larger sets are offloaded. 0 means
	// DefaultThresholdTokens.
	ThresholdTokens int `json:"threshold_tokens" toml:"threshold_tokens" yaml:"threshold_tokens"`
	// TTLSeconds is how long an offloaded file lives before the janitor
	// deletes it. 0 means DefaultTTLSeconds.
	TTLSeconds int64 `json:"ttl_seconds" toml:"ttl_seconds" yaml:"ttl_seconds"`
	// OutputDir is where files are written. Empty means a private
	// directory (0700, owned by this user) inside the system temporary
	// directory; see [DefaultOutputDir].
	OutputDir string `json:"output_dir" toml:"output_dir" yaml:"output_dir"`
	// FilePrefix starts every file name: {prefix}-{operation}-{ULID}.jsonl.
	// The janitor deletes only names with this prefix. Empty means
	// DefaultFilePrefix.
	FilePrefix string `json:"file_prefix" toml:"file_prefix" yaml:"file_prefix"`
	// Delivery is how an offloaded result reaches the model: "descriptor"
	// (the default), "compact" or "truncate"; see [Delivery]. A
	// [WithDelivery] option may choose per tool and client instead.
	Delivery Delivery `json:"delivery,omitempty" toml:"delivery,omitempty" yaml:"delivery,omitempty"`
	// SessionBudgetTokens bounds the tokens of results one session may
	// receive inline: once a session's inline results would pass it,
	// further results are offloaded even when each is under the
	// threshold. 0 means no budget.
	SessionBudgetTokens int `json:"session_budget_tokens,omitempty" toml:"session_budget_tokens,omitempty" yaml:"session_budget_tokens,omitempty"`
	// MaxDirBytes bounds the bytes of the files of this offloader's name
	// (see [WithName]) in OutputDir: over it, the file that expires first
	// (the oldest, for one TTL) is deleted first, with an OnFileEvicted
	// event, and a result that cannot fit gets the truncated fallback.
	// 0 means DefaultMaxDirBytes, a negative value no quota.
	MaxDirBytes int64 `json:"max_dir_bytes" toml:"max_dir_bytes" yaml:"max_dir_bytes"`
}

// IsEnabled reports whether offloading is on: Enabled is nil or true.
func (c Config) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// Bool returns a pointer to v, for [Config.Enabled].
func Bool(v bool) *bool { return &v }

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	c.Enabled = Bool(c.IsEnabled()) // a copy: the caller's bool is the caller's
	if c.ThresholdTokens == 0 {
		c.ThresholdTokens = DefaultThresholdTokens
	}
	if c.TTLSeconds == 0 {
		c.TTLSeconds = DefaultTTLSeconds
	}
	if c.FilePrefix == "" {
		c.FilePrefix = DefaultFilePrefix
	}
	if c.Delivery == "" {
		c.Delivery = DeliveryDescriptor
	}
	if c.MaxDirBytes == 0 {
		c.MaxDirBytes = DefaultMaxDirBytes
	}
	return c
}

// DefaultConfig returns the specification's defaults: enabled, a threshold
// of 1600 tokens, a one-hour TTL, the system temporary directory and the
// "atlatl" prefix; and this package's: descriptor delivery, no session
// budget, a quota of DefaultMaxDirBytes.
func DefaultConfig() Config {
	return Config{
		Enabled:         Bool(true),
		ThresholdTokens: DefaultThresholdTokens,
		TTLSeconds:      DefaultTTLSeconds,
		FilePrefix:      DefaultFilePrefix,
		Delivery:        DeliveryDescriptor,
		MaxDirBytes:     DefaultMaxDirBytes,
	}
}

// TTL returns TTLSeconds as a duration.
func (c Config) TTL() time.Duration { return time.Duration(c.TTLSeconds) * time.Second }

// A ConfigError reports a configuration key with a value it cannot take.
type ConfigError struct {
	Key    string // the key or environment variable, e.g. "threshold_tokens"
	Value  string // the offending value as given
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("lro: invalid %s %q: %s", e.Key, e.Value, e.Reason)
}

// Validate reports the first key whose value is out of range as a
// *[ConfigError]. Zero values are valid: they mean the defaults.
func (c Config) Validate() error {
	for _, key := range configKeys {
		if err := c.check(key); err != nil {
			return err
		}
	}
	return nil
}

// configKeys are the keys of a Config, in the order Validate checks them
// and ApplyEnv reads them.
var configKeys = []string{"enabled", "threshold_tokens", "ttl_seconds", "file_prefix", "delivery",
	"session_budget_tokens", "output_dir", "max_dir_bytes"}

// check reports whether the value of key is out of range, naming the key.
func (c Config) check(key string) error {
	switch key {
	case "threshold_tokens":
		if c.ThresholdTokens < 0 {
			return &ConfigError{key, strconv.Itoa(c.ThresholdTokens), "must be a positive number of tokens (0 for the default)"}
		}
	case "ttl_seconds":
		if c.TTLSeconds < 0 {
			return &ConfigError{key, strconv.FormatInt(c.TTLSeconds, 10), "must be a positive number of seconds (0 for the default)"}
		}
		if c.TTLSeconds > maxTTLSeconds {
			return &ConfigError{key, strconv.FormatInt(c.TTLSeconds, 10), "must be at most 10 years"}
		}
	case "file_prefix":
		if c.FilePrefix != "" {
			if err := store.CheckName(c.FilePrefix); err != nil {
				return &ConfigError{key, c.FilePrefix, err.Error()}
			}
		}
	case "delivery":
		if _, err := ParseDelivery(string(c.Delivery)); c.Delivery != "" && err != nil {
			return &ConfigError{key, string(c.Delivery), "want \"descriptor\", \"compact\" or \"truncate\""}
		}
	case "session_budget_tokens":
		if c.SessionBudgetTokens < 0 {
			return &ConfigError{key, strconv.Itoa(c.SessionBudgetTokens), "must be a number of tokens, or 0 for none"}
		}
	case "output_dir":
		if strings.ContainsRune(c.OutputDir, 0) {
			return &ConfigError{key, c.OutputDir, "contains a NUL byte"}
		}
		return checkStoreURL(c.OutputDir)
	}
	return nil
}

const maxTTLSeconds = 10 * 365 * 24 * 3600

// ApplyEnv overrides c with the environment variables
// {prefix}_PROMPT__OFFLOAD__ENABLED, _THRESHOLD_TOKENS, _TTL_SECONDS,
// _OUTPUT_DIR, _FILE_PREFIX, _DELIVERY, _SESSION_BUDGET_TOKENS and
// _MAX_DIR_BYTES that are set. An empty prefix means
// [DefaultEnvPrefix]. A variable that is set but malformed is an error that
// names it; it never falls back to a default silently. Each value read is
// checked as [Config.Validate] checks its key (a negative TTL is refused),
// and the error names the variable, not the key: the operator who set it
// finds it. ApplyEnv does not check the fields the environment leaves
// alone: call [Config.Validate], or let [New] do it.
func (c *Config) ApplyEnv(prefix string) error {
	return c.applyEnv(prefix, os.LookupEnv)
}

func (c *Config) applyEnv(prefix string, lookup func(string) (string, bool)) error {
	if prefix == "" {
		prefix = DefaultEnvPrefix
	}
	base := prefix + "_PROMPT__OFFLOAD__"
	if err := c.readEnv(base, lookup); err != nil {
		return err
	}
	for _, key := range configKeys {
		variable := base + strings.ToUpper(key)
		if _, set := lookup(variable); !set {
			continue
		}
		if err := c.check(key); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) && ce.Key == key {
				return &ConfigError{variable, ce.Value, ce.Reason}
			}
			return err
		}
	}
	return nil
}

// readEnv sets the fields whose variables are set, parsed.
func (c *Config) readEnv(base string, lookup func(string) (string, bool)) error {
	if v, ok := lookup(base + "ENABLED"); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{base + "ENABLED", v, "want true or false"}
		}
		c.Enabled = Bool(b)
	}
	if v, ok := lookup(base + "THRESHOLD_TOKENS"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{base + "THRESHOLD_TOKENS", v, "want a whole number of tokens"}
		}
		c.ThresholdTokens = n
	}
	if v, ok := lookup(base + "TTL_SECONDS"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return &ConfigError{base + "TTL_SECONDS", v, "want a whole number of seconds"}
		}
		c.TTLSeconds = n
	}
	if v, ok := lookup(base + "OUTPUT_DIR"); ok {
		c.OutputDir = v
	}
	if v, ok := lookup(base + "FILE_PREFIX"); ok {
		c.FilePrefix = v
	}
	if v, ok := lookup(base + "DELIVERY"); ok {
		d, err := ParseDelivery(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{base + "DELIVERY", v, "want descriptor, compact or truncate"}
		}
		c.Delivery = d
	}
	if v, ok := lookup(base + "SESSION_BUDGET_TOKENS"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{base + "SESSION_BUDGET_TOKENS", v, "want a whole number of tokens"}
		}
		c.SessionBudgetTokens = n
	}
	if v, ok := lookup(base + "MAX_DIR_BYTES"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return &ConfigError{base + "MAX_DIR_BYTES", v, "want a whole number of bytes"}
		}
		c.MaxDirBytes = n
	}
	return nil
}

// checkStoreURL is Validate's check of an output_dir that is a store URL:
// it must parse, and its scheme must be registered.
func checkStoreURL(dir string) error {
	scheme, ok := store.Scheme(dir)
	if !ok {
		return nil
	}
	if _, err := url.Parse(dir); err != nil {
		return &ConfigError{"output_dir", dir, fmt.Sprintf("not a valid store URL: %v", err)}
	}
	if store.Registered(scheme) {
		return nil
	}
	known := "none"
	if s := StoreSchemes(); len(s) > 0 {
		known = strings.Join(s, ", ")
	}
	return &ConfigError{"output_dir", dir, fmt.Sprintf(
		"no object store is registered for the URL scheme %q (registered: %s); add import _ \"github.com/mcplro/lro/blobfs\" to the program for s3://, or register the scheme with lro.RegisterStore",
		scheme, known)}
}
