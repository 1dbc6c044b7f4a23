package textlines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLineRange(t *testing.T) {
	for in, want := range map[string]Range{
		"100-200":         {100, 200},
		"5":               {5, 5},
		"100-":            {100, 0},
		"1-1":             {1, 1},
		" 7 - 9 ":         {7, 9},
		"999999999":       {999999999, 999999999},
		"000012-000013":   {12, 13},
		"1-999999999":     {1, 999999999},
		"999999999-":      {999999999, 0},
		"42-42":           {42, 42},
		"3-4\t":           {3, 4},
		"\t3":             {3, 3},
		"10-10000":        {10, 10000},
		"2-3":             {2, 3},
		"1-":              {1, 0},
		"1000000-2000000": {1000000, 2000000},
	} {
		got, err := ParseRange(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "-", "0", "0-5", "-5", "5-3", "a", "1-b", "1--2", "1-2-3", "+1", "1e3", "0x10",
		"1000000000", "1-1000000000", "99999999999999999999", "1,2", "1 2", "١", "1\x002", strings.Repeat("9", 1000)} {
		_, err := ParseRange(in)
		if assert.Error(t, err, "%q", in) {
			assert.Contains(t, err.Error(), "invalid line range")
			assert.Less(t, len(err.Error()), 300, "the error quotes a bounded input")
		}
	}
	for _, s := range []string{"100-200", "5", "100-"} {
		r, err := ParseRange(s)
		require.NoError(t, err)
		assert.Equal(t, s, r.String())
	}
}

// textFixture is a file with what grep and sed treat specially: empty
// lines, non-ASCII text, a CR, lines over the read buffer, and no newline
// at the end.
func textFixture() []byte {
	var b bytes.Buffer
	for i := 1; i <= 300; i++ {
		switch {
		case i%50 == 0:
			b.WriteString("\n") // empty
		case i%37 == 0:
			fmt.Fprintf(&b, "%d level=error msg=\"disk full\" où=%d\r\n", i, i)
		case i == 120:
			// Over the buffer: matched whole, shown whole when it fits.
			b.WriteString(strings.Repeat("x", BufSize+1000) + " level=warn tail-match\n")
		default:
			fmt.Fprintf(&b, "2026-11-23T10:00:%02dZ level=info msg=\"request served\" id=%d\n", i%60, i)
		}
	}
	b.WriteString("the last line has no newline WARN")
	return b.Bytes()
}

// tool returns the path of name, or skips the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

func runTool(t *testing.T, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && filepath.Base(path) == "grep" {
		err = nil // grep: no match
	}
	require.NoError(t, err, "%s %q", path, args)
	return string(out)
}

// big is a budget that nothing in the fixture reaches.
var big = Limits{Budget: 64 << 20}

func TestReadLinesEqualsSed(t *testing.T) {
	sed := tool(t, "sed")
	data := textFixture()
	file := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	for _, tc := range []struct{ rng, script string }{
		{"1", "1p"}, {"3-7", "3,7p"}, {"45-55", "45,55p"}, {"118-122", "118,122p"},
		{"290-", "290,$p"}, {"301", "301p"}, {"299-400", "299,400p"}, {"1-", "1,$p"}, {"400-", "400,$p"},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			rng, err := ParseRange(tc.rng)
			require.NoError(t, err)
			got, err := ReadLines(context.Background(), bytes.NewReader(data), rng, false, big)
			require.NoError(t, err)
			assert.Equal(t, runTool(t, sed, "-n", tc.script, file), got.Text)
			assert.Zero(t, got.Cut)
			assert.Zero(t, got.Next)
		})
	}
	t.Run("numbered", func(t *testing.T) {
		got, err := ReadLines(context.Background(), bytes.NewReader(data), Range{45, 55}, true, big)
		require.NoError(t, err)
		grep := tool(t, "grep")
		want := strings.Join(strings.SplitAfter(runTool(t, grep, "-n", "", file), "\n")[44:55], "")
		assert.Equal(t, want, got.Text)
	})
}

func TestReadLinesStopsAfterRange(t *testing.T) {
	// A reader that fails after the range shows that nothing past it is
	// read (beyond one buffer).
	data := []byte(strings.Repeat("line\n", 10))
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errors.New("read past the range")))
	got, err := ReadLines(context.Background(), r, Range{2, 3}, false, big)
	require.NoError(t, err)
	assert.Equal(t, "line\nline\n", got.Text)
	assert.False(t, got.EOF)
	assert.Equal(t, 3, got.Lines)
}

func TestGrepEqualsGrep(t *testing.T) {
	grep := tool(t, "grep")
	data := textFixture()
	file := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	for _, q := range []Query{
		{Pattern: "level=error"},
		{Pattern: "level=error", Before: 2, After: 1},
		{Pattern: "level=error", After: 3},
		{Pattern: "level=error", Before: 4},
		{Pattern: "id=1[0-9]$", Before: 1, After: 1},
		{Pattern: "warn|error", Before: 1, After: 1},
		{Pattern: "WARN", IgnoreCase: true},
		{Pattern: "WARN", IgnoreCase: true, Before: 3, After: 3},
		{Pattern: "warn"},
		{Pattern: "^$", After: 1},
		{Pattern: "tail-match$", Before: 1},
		{Pattern: "^2026-11-23T10:00:0[0-4]Z", Before: 2, After: 2},
		{Pattern: "id=(2|3)0\\b", After: 2},
		{Pattern: "nothing matches this"},
		{Pattern: "", Before: 0},
		{Pattern: "served", Before: 100, After: 100},
		{Pattern: "r\r$"},
	} {
		name := fmt.Sprintf("%s/B%d/A%d/i=%v", q.Pattern, q.Before, q.After, q.IgnoreCase)
		t.Run(name, func(t *testing.T) {
			args := []string{"-n", "-E", "-a"}
			if q.IgnoreCase {
				args = append(args, "-i")
			}
			if q.Before > 0 {
				args = append(args, fmt.Sprintf("-B%d", q.Before))
			}
			if q.After > 0 {
				args = append(args, fmt.Sprintf("-A%d", q.After))
			}
			args = append(args, "-e", q.Pattern, file)
			got, err := Grep(context.Background(), bytes.NewReader(data), q, big)
			require.NoError(t, err)
			assert.Equal(t, runTool(t, grep, args...), got.Text)
			assert.True(t, got.EOF)
			assert.Equal(t, 301, got.Lines)
			assert.Equal(t, got.Matches, got.MatchesShown)
			count := strings.TrimSpace(runTool(t, grep, append([]string{"-c"}, args[1:]...)...))
			assert.Equal(t, count, fmt.Sprint(got.Matches))
		})
	}
}

func TestGrepLongLine(t *testing.T) {
	// A line of a megabyte with a match near its start: found, shown cut,
	// with a note, never whole.
	line := "NEEDLE" + strings.Repeat("a", 1<<20)
	data := "first\n" + line + "\nlast\n"
	got, err := Grep(context.Background(), strings.NewReader(data), Query{Pattern: "^NEEDLE", Before: 1, After: 1}, Limits{Budget: 8000, MaxLine: 2000})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Matches)
	assert.Equal(t, 1, got.Cut)
	assert.Less(t, len(got.Text), 8000)
	assert.True(t, strings.HasPrefix(got.Text, "1-first\n2:NEEDLE"+strings.Repeat("a", 1994)+"\n[lro: line 2 is 1048582 bytes long; only its first 2000 are shown]\n3-last\n"), got.Text[:100])

	// A match past MaxMatch bytes is not looked for: the line is searched
	// in its first MaxMatch bytes, and the answer says so.
	far := strings.Repeat("a", 1<<20) + "NEEDLE"
	got, err = Grep(context.Background(), strings.NewReader("first\n"+far+"\n"+far+"\nNEEDLE\n"), Query{Pattern: "NEEDLE"}, Limits{Budget: 8000})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Matches)
	assert.Equal(t, 2, got.Partial)
	assert.Equal(t, 2, got.FirstPartial)
	assert.Equal(t, "4:NEEDLE\n[lro: 2 lines are longer than 262144 bytes and were searched in their first 262144 bytes only (the first is line 2); a match further in, or one that needs their end ($), is not found]\n", got.Text)

	// Up to MaxMatch bytes a line is matched whole, across read buffers,
	// and a rune split by the read buffer still matches.
	near := strings.Repeat("b", MaxMatch-7) + "NEEDLE"
	got, err = Grep(context.Background(), strings.NewReader(near+"\n"), Query{Pattern: "NEEDLE$"}, Limits{Budget: 100})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Matches)
	assert.Zero(t, got.Partial)
	split := strings.Repeat("b", BufSize-1) + "éz"
	got, err = Grep(context.Background(), strings.NewReader(split+"\n"), Query{Pattern: "bézé?$"}, big)
	require.NoError(t, err)
	assert.Equal(t, "1:"+split+"\n", got.Text)
	// A rune cut at MaxMatch is left out of the match, not mangled.
	cut := strings.Repeat("c", MaxMatch-1) + "é" + strings.Repeat("d", 10)
	got, err = Grep(context.Background(), strings.NewReader(cut), Query{Pattern: "c\\x{FFFD}"}, Limits{Budget: 100})
	require.NoError(t, err)
	assert.Zero(t, got.Matches)
	assert.Equal(t, 1, got.Partial)

	// A single line larger than the budget: its beginning, then the note.
	got, err = ReadLines(context.Background(), strings.NewReader(line), Range{1, 0}, false, Limits{Budget: 1000})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Cut)
	assert.LessOrEqual(t, len(got.Text), 1000)
	assert.Contains(t, got.Text, "[lro: line 1 is 1048582 bytes long; only its first ")
}

// BenchmarkGrepLongLine: the time grep spends on a line does not grow
// with the line past MaxMatch (issue 22: one 20 MB line took 37.6 s, matched
// whole with a costly pattern). Compare the sizes' ns/op: flat from 256K.
func BenchmarkGrepLongLine(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20, 20 << 20} {
		data := strings.Repeat("ab", size/2) + "\n"
		b.Run(fmt.Sprintf("%dK", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Grep(context.Background(), strings.NewReader(data), Query{Pattern: "[a-z]{300}x"}, Limits{Budget: 4000}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestTextBudget(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %04d match\n", i)
	}
	data := b.String()
	lim := Limits{Budget: 1000}

	got, err := ReadLines(context.Background(), strings.NewReader(data), Range{1, 0}, false, lim)
	require.NoError(t, err)
	body, note, _ := strings.Cut(got.Text, "[lro:")
	assert.LessOrEqual(t, len(body), 1000)
	assert.Equal(t, 62, got.Shown, "whole lines of 16 bytes")
	assert.Equal(t, 63, got.Next)
	assert.Equal(t, data[:62*16], body)
	assert.Equal(t, " stopped before line 63 to stay within 1000 bytes; read lines 63- next]\n", note)

	got, err = Grep(context.Background(), strings.NewReader(data), Query{Pattern: "match", After: 1}, lim)
	require.NoError(t, err)
	body, note, _ = strings.Cut(got.Text, "[lro:")
	assert.LessOrEqual(t, len(body), 1000)
	assert.Equal(t, 1000, got.Matches, "matches past the budget are counted")
	assert.True(t, got.EOF)
	assert.Contains(t, note, fmt.Sprintf("%d of 1000 matching lines shown", got.MatchesShown))
	assert.Contains(t, note, fmt.Sprintf("read lines %d- for the rest", got.Next))
	assert.Equal(t, got.MatchesShown+1, got.Next)
}

func TestGrepInvalid(t *testing.T) {
	for _, q := range []Query{
		{Pattern: "("},
		{Pattern: "a{1001}"},
		{Pattern: strings.Repeat("a", MaxPattern+1)},
		{Pattern: "a", Before: -1},
		{Pattern: "a", After: MaxContext + 1},
		{Pattern: `\p{Nope}`},
		{Pattern: "[a-z]{1000}x"},
	} {
		_, err := Grep(context.Background(), strings.NewReader("a\n"), q, big)
		assert.Error(t, err, "%.40q", q.Pattern)
	}
}

// TestGrepInvalidEchoIsCapped: an invalid pattern's error repeats at most
// a few hundred bytes of it, not the 4 KiB the pattern may hold.
func TestGrepInvalidEchoIsCapped(t *testing.T) {
	_, err := Grep(context.Background(), strings.NewReader("a\n"), Query{Pattern: "(" + strings.Repeat("a", MaxPattern-1)}, big)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400, err.Error())
	assert.Contains(t, err.Error(), "missing closing ): `(aaa")
	assert.Contains(t, err.Error(), fmt.Sprintf("...(%d bytes)", MaxPattern))
}

func TestTextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Grep(ctx, strings.NewReader("a\n"), Query{Pattern: "a"}, big)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = ReadLines(ctx, strings.NewReader("a\n"), Range{1, 1}, false, big)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestTextReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(strings.Repeat("x", 3*BufSize)), iotest.ErrReader(boom))
	_, err := Grep(context.Background(), r, Query{Pattern: "y"}, big)
	assert.ErrorIs(t, err, boom)
	r = io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom))
	_, err = ReadLines(context.Background(), r, Range{1, 0}, false, big)
	assert.ErrorIs(t, err, boom)
}

func FuzzGrepLines(f *testing.F) {
	f.Add([]byte("a\nb\n\nc"), "b", 1, 1, false)
	f.Add([]byte(strings.Repeat("é", 40000)+"\nz"), "é+$", 0, 2, true)
	f.Fuzz(func(t *testing.T, data []byte, pattern string, before, after int, fold bool) {
		if len(data) > 256<<10 {
			return
		}
		q := Query{Pattern: pattern, Before: before % 5, After: after % 5, IgnoreCase: fold}
		if q.Before < 0 || q.After < 0 {
			return
		}
		got, err := Grep(context.Background(), bytes.NewReader(data), q, Limits{Budget: 2000, MaxLine: 300})
		if err != nil {
			return
		}
		if body, _, _ := strings.Cut(got.Text, "\n[lro: stopped"); len(body) > 2000 {
			t.Fatalf("%d bytes over a budget of 2000", len(body))
		}
	})
}
