package lro

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Default configuration values, as the specification gives them.
const (
	DefaultThresholdTokens = 1600
	DefaultTTLSeconds      = 3600
	DefaultFilePrefix      = "atlatl"
	// DefaultEnvPrefix is the prefix of the environment variables read by
	// [Config.ApplyEnv]: ATLATL_PROMPT__OFFLOAD__ENABLED and so on.
	DefaultEnvPrefix = "ATLATL"
)

// Config is the [prompt.offload] section of the specification.
//
// Its tags let you decode the section with your own TOML, JSON or YAML
// decoder. Start from [DefaultConfig] so that keys the file leaves out keep
// their defaults:
//
//	cfg := lro.DefaultConfig()
//	err := toml.Unmarshal(data["prompt"]["offload"], &cfg)
type Config struct {
	// Enabled turns offloading on. When false every result stays inline.
	Enabled bool `json:"enabled" toml:"enabled" yaml:"enabled"`
	// ThresholdTokens is the largest estimated size, in tokens, of a result
	// set that stays inline. Larger sets are offloaded.
	ThresholdTokens int `json:"threshold_tokens" toml:"threshold_tokens" yaml:"threshold_tokens"`
	// TTLSeconds is how long an offloaded file lives before the janitor
	// deletes it.
	TTLSeconds int64 `json:"ttl_seconds" toml:"ttl_seconds" yaml:"ttl_seconds"`
	// OutputDir is where files are written. Empty means a private
	// directory (0700, owned by this user) inside the system temporary
	// directory; see [DefaultOutputDir].
	OutputDir string `json:"output_dir" toml:"output_dir" yaml:"output_dir"`
	// FilePrefix starts every file name: {prefix}-{operation}-{ULID}.jsonl.
	// The janitor deletes only names with this prefix.
	FilePrefix string `json:"file_prefix" toml:"file_prefix" yaml:"file_prefix"`
}

// DefaultConfig returns the specification's defaults: enabled, a threshold
// of 1600 tokens, a one-hour TTL, the system temporary directory and the
// "atlatl" prefix.
func DefaultConfig() Config {
	return Config{
		Enabled:         true,
		ThresholdTokens: DefaultThresholdTokens,
		TTLSeconds:      DefaultTTLSeconds,
		FilePrefix:      DefaultFilePrefix,
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
// *[ConfigError].
func (c Config) Validate() error {
	if c.ThresholdTokens <= 0 {
		return &ConfigError{"threshold_tokens", strconv.Itoa(c.ThresholdTokens), "must be a positive number of tokens"}
	}
	if c.TTLSeconds <= 0 {
		return &ConfigError{"ttl_seconds", strconv.FormatInt(c.TTLSeconds, 10), "must be a positive number of seconds"}
	}
	if c.TTLSeconds > maxTTLSeconds {
		return &ConfigError{"ttl_seconds", strconv.FormatInt(c.TTLSeconds, 10), "must be at most 10 years"}
	}
	if err := checkName(c.FilePrefix); err != nil {
		return &ConfigError{"file_prefix", c.FilePrefix, err.Error()}
	}
	if strings.ContainsRune(c.OutputDir, 0) {
		return &ConfigError{"output_dir", c.OutputDir, "contains a NUL byte"}
	}
	return nil
}

const maxTTLSeconds = 10 * 365 * 24 * 3600

// ApplyEnv overrides c with the environment variables
// {prefix}_PROMPT__OFFLOAD__ENABLED, _THRESHOLD_TOKENS, _TTL_SECONDS,
// _OUTPUT_DIR and _FILE_PREFIX that are set. An empty prefix means
// [DefaultEnvPrefix]. A variable that is set but malformed is an error that
// names it; it never falls back to a default silently. ApplyEnv does not
// validate the result: call [Config.Validate], or let [New] do it.
func (c *Config) ApplyEnv(prefix string) error {
	return c.applyEnv(prefix, os.LookupEnv)
}

func (c *Config) applyEnv(prefix string, lookup func(string) (string, bool)) error {
	if prefix == "" {
		prefix = DefaultEnvPrefix
	}
	base := prefix + "_PROMPT__OFFLOAD__"
	if v, ok := lookup(base + "ENABLED"); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{base + "ENABLED", v, "want true or false"}
		}
		c.Enabled = b
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
	return nil
}

// checkName accepts the characters that may appear in a file prefix or an
// operation name: they become part of a file name that a shell command
// and a glob must match, so they stay in a small portable set.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("must not be empty")
	}
	if len(s) > 64 {
		return fmt.Errorf("must be at most 64 characters")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return fmt.Errorf("may hold only letters, digits and '_'")
		}
	}
	return nil
}
