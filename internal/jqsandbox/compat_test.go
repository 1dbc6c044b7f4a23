package jqsandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const jqPath = "/usr/bin/jq"

// runJQ runs the jq binary and returns its parsed outputs.
func runJQ(t *testing.T, file string, mode Mode, filter string, args ...string) []any {
	t.Helper()
	vs, err := jqOutputs(file, mode, filter, args...)
	require.NoError(t, err)
	return vs
}

// jqOutputs runs the jq binary and returns its parsed outputs, or what
// went wrong.
func jqOutputs(file string, mode Mode, filter string, args ...string) ([]any, error) {
	argv := []string{"-c"}
	if mode == Slurp {
		argv = append(argv, "-s")
	}
	argv = append(append(argv, args...), filter, file)
	cmd := exec.Command(jqPath, argv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("jq %v: %w: %s", argv, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	vs := []any{}
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if err != io.EOF {
				return nil, fmt.Errorf("jq %v output: %w", argv, err)
			}
			return vs, nil
		}
		vs = append(vs, v)
	}
}

// TestMatchesJQ compares the parsed results with those of jq 1.6 run as a
// subprocess, in both modes.
func TestMatchesJQ(t *testing.T) {
	if _, err := os.Stat(jqPath); err != nil {
		t.Skip("jq not installed")
	}
	file := filepath.Join(t.TempDir(), "records.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(sampleJSONL), 0o600))

	tests := []struct {
		filter string
		mode   Mode
	}{
		{`select(.title | test("cach"; "i"))`, Stream},
		{`{id, title, namespace}`, Stream},
		{`group_by(.namespace) | map({namespace: .[0].namespace, count: length})`, Slurp},
		{`sort_by(.created)`, Slurp},
		{`select((.tags // []) | index("security"))`, Stream},
		{`[.title, .namespace] | @tsv`, Stream},
		{`sort_by(.provenance.confidence) | reverse | map({id, title, confidence: .provenance.confidence})`, Slurp},
		{`.`, Stream},
		{`.`, Slurp},
		{`length`, Slurp},
		{`map(.provenance.confidence) | add / length`, Slurp},
		{`.provenance.confidence * 100 | floor`, Stream},
		{`.size / 7`, Stream},
		{`[.[] | .tags // [] | length] | add`, Slurp},
		{`to_entries | map(select(.value | type == "string")) | from_entries`, Stream},
		{`[paths(type == "number")]`, Stream},
		{`.created | fromdate`, Stream},
		{`.created | strptime("%Y-%m-%dT%H:%M:%SZ") | mktime`, Stream},
		{`{title: .title | ascii_downcase, words: (.title | split(" ") | length)}`, Stream},
		{`.title | gsub("[aeiou]"; "")`, Stream},
		{`[.[] | .namespace] | unique`, Slurp},
		{`[(min_by(.provenance.confidence) | .id), (max_by(.created) | .id)]`, Slurp},
		{`"\(.id): \(.title)"`, Stream},
		{`[.tags[]?] | join(",")`, Stream},
		{`with_entries(select(.key != "provenance"))`, Stream},
		{`.id as $i | {($i): .provenance}`, Stream},
		{`[.id, .provenance.confidence, .size] | @csv`, Stream},
		{`reduce .[] as $r ({}; .[$r.namespace] += 1)`, Slurp},
		{`INDEX(.id) | keys`, Slurp},
		{`[limit(3; .[])] | map(.id)`, Slurp},
		{`del(.provenance) | keys`, Stream},
		{`(.tags // []) | contains(["security"])`, Stream},
		{`tojson | fromjson | .id`, Stream},
		{`if .provenance.confidence > 0.8 then "high" elif .provenance.confidence > 0.5 then "mid" else "low" end`, Stream},
		{`[.[] | select(.created >= "2024-06")] | length`, Slurp},
		{`.provenance |= with_entries(.value |= tostring)`, Stream},
		{`[.[] | .size] | sort | .[length / 2 | floor]`, Slurp},
		{`map(select(.namespace | startswith("_semantic"))) | map(.id) | sort | reverse`, Slurp},
		{`.title | [match("(?<w>[A-Z]\\w+)"; "g").captures[0].string]`, Stream},
		{`[.[] | {(.id): .size}] | add`, Slurp},
		{`.tags as [$first] | $first`, Stream},
		{`[.title | scan("c[a-z]")]`, Stream},
		{`.size % 7, -.size, (.size | tostring | length)`, Stream},
		{`[.[].provenance.confidence] | [min, max, (add / length)]`, Slurp},
		{`.created[0:4] | tonumber`, Stream},
		{`[.[] | .title | ascii_downcase | select(contains("cache"))]`, Slurp},
		{`.title | @base64 | @base64d`, Stream},
		{`{id} + {n: (.tags | length)} | . * {n: {deep: true}}`, Stream},
		{`[.[] | select(.tags | index("caching"))] | map(.id)`, Slurp},
		{`.provenance.confidence | . * 3 | . - 1 | . / 4`, Stream},
	}
	// jq takes its time to start (it compiles its builtins each run): its
	// answers are fetched side by side, then compared one by one.
	type answer struct {
		values []any
		err    error
	}
	answers := make([]answer, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		wg.Go(func() {
			vs, err := jqOutputs(file, tt.mode, tt.filter)
			answers[i] = answer{vs, err}
		})
	}
	wg.Wait()
	lim := testLimits()
	for i, tt := range tests {
		t.Run(tt.mode.String()+" "+tt.filter, func(t *testing.T) {
			want, err := answers[i].values, answers[i].err
			require.NoError(t, err)
			res, err := run(t, tt.filter, sampleJSONL, tt.mode, lim, nil)
			require.NoError(t, err)
			require.False(t, res.Truncated)
			require.Equal(t, want, decodeResults(t, res.Values))
		})
	}

	t.Run("variables", func(t *testing.T) {
		filter := `select(.namespace | startswith($namespace)) | .id`
		want := runJQ(t, file, Stream, filter, "--arg", "namespace", "_semantic")
		res, err := run(t, filter, sampleJSONL, Stream, lim, []string{"namespace"}, "_semantic")
		require.NoError(t, err)
		require.Equal(t, want, decodeResults(t, res.Values))
		require.Len(t, want, 5)

		filter = `map(select(.provenance.confidence >= $min and (.tags // [] | index($tag)))) | map(.id)`
		want = runJQ(t, file, Slurp, filter, "--argjson", "min", "0.9", "--arg", "tag", "security")
		res, err = run(t, filter, sampleJSONL, Slurp, lim, []string{"min", "tag"}, 0.9, "security")
		require.NoError(t, err)
		require.Equal(t, want, decodeResults(t, res.Values))
	})

	// Numbers print as jq 1.6 prints them (records are decoded to float64).
	t.Run("number formatting", func(t *testing.T) {
		res, err := run(t, `.provenance.confidence, .size`, sampleJSONL, Stream, lim, nil)
		require.NoError(t, err)
		got := strings.Join(strs(res.Values), " ")
		out, err := exec.Command(jqPath, "-c", `.provenance.confidence, .size`, file).Output()
		require.NoError(t, err)
		require.Equal(t, strings.Join(strings.Fields(string(out)), " "), got)
	})
}
