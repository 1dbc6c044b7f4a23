package textlines

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcplro/lro/internal/records"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testHeader = `{"type":"lro_header","operation":"git_diff","query":null,"count":0,"schema_version":"generic","detail":"light"}` + "\n"

// offloadedText is the file an offload of text writes: a header, then the
// records internal/records makes of the text's lines.
func offloadedText(t testing.TB, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(testHeader)
	require.NoError(t, records.FromLines([]byte(text)).Src.Each(func(_ int, r *records.Record) bool {
		b.Write(r.Line)
		b.WriteByte('\n')
		return true
	}))
	return b.Bytes()
}

// diffText is a git diff of n lines: hunks, added tests, escapes a JSON
// string must encode (quotes, backslashes, tabs, "\n" in Go source),
// non-ASCII, a blank line now and then, and git's "\ No newline" mark.
func diffText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i%400 == 0:
			b.WriteString("\n")
		case i%100 == 1:
			fmt.Fprintf(&b, "diff --git a/pkg/f%d.go b/pkg/f%d.go\n", i, i)
		case i%100 == 2:
			fmt.Fprintf(&b, "@@ -%d,7 +%d,9 @@ func helper() {\n", i, i+2)
		case i%9 == 0:
			fmt.Fprintf(&b, "+func Test%d(t *testing.T) {\n", i)
		case i%9 == 1:
			fmt.Fprintf(&b, "-\tfmt.Printf(\"old %%d\\n\", %d) // \"quoted\" où ✓\n", i)
		case i%9 == 2:
			fmt.Fprintf(&b, "+\tpath := `C:\\temp\\%d` + \"\\t\" // func Test in a comment\n", i)
		case i%97 == 0:
			b.WriteString("\\ No newline at end of file\n")
		default:
			fmt.Fprintf(&b, " \tctx := context.Background() // %d $\n", i)
		}
	}
	return b.String()
}

func TestBodyOfATextIsTheText(t *testing.T) {
	text := diffText(5000)
	got, err := io.ReadAll(Body(bytes.NewReader(offloadedText(t, text))))
	require.NoError(t, err)
	assert.Equal(t, text, string(got))

	// One read at a time, through every split.
	got, err = io.ReadAll(iotest.OneByteReader(Body(iotest.HalfReader(bytes.NewReader(offloadedText(t, text))))))
	require.NoError(t, err)
	assert.Equal(t, text, string(got))

	// A CR before a line break is part of the break; the text's last
	// line gets one; blank lines at its start count.
	got, err = io.ReadAll(Body(bytes.NewReader(offloadedText(t, "\n\na\r\nb\r\n\nc"))))
	require.NoError(t, err)
	assert.Equal(t, "\n\na\nb\n\nc\n", string(got))
}

// TestTextGrepAndLinesEqualTheTools: issue 38's diff, offloaded as text.
// grep matched the file's JSON lines: `^\+func Test` found nothing, where
// grep -c on the diff finds 546 (here 544), and lines 1-5 began with the
// header. Read through Body they print what grep -n and sed -n print on
// the text itself.
func TestTextGrepAndLinesEqualTheTools(t *testing.T) {
	grep, sed := tool(t, "grep"), tool(t, "sed")
	text := diffText(5000)
	file := filepath.Join(t.TempDir(), "diff.txt")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	data := offloadedText(t, text)
	ctx := context.Background()

	for _, pattern := range []string{`^\+func Test`, `^-`, `\$$`, `"quoted" où`, `C:\\temp\\1[0-9]\b`, `^$`, `^\\ No newline`, `func Test`} {
		out, err := Grep(ctx, Body(bytes.NewReader(data)), Query{Pattern: pattern}, big)
		require.NoError(t, err)
		count := strings.TrimSpace(runTool(t, grep, "-c", "-E", "-e", pattern, file))
		assert.Equal(t, count, fmt.Sprint(out.Matches), "grep -c %s", pattern)
		assert.Equal(t, runTool(t, grep, "-n", "-E", "-e", pattern, file), out.Text, "grep -n %s", pattern)
		assert.Equal(t, 5000, out.Lines)
	}
	out, err := Grep(ctx, Body(bytes.NewReader(data)), Query{Pattern: `^\+func Test`}, big)
	require.NoError(t, err)
	t.Logf("grep -c '^\\+func Test': %d matches of %d lines", out.Matches, out.Lines)

	out, err = Grep(ctx, Body(bytes.NewReader(data)), Query{Pattern: `^@@`, Before: 2, After: 1}, big)
	require.NoError(t, err)
	assert.Equal(t, runTool(t, grep, "-n", "-E", "-B2", "-A1", "-e", `^@@`, file), out.Text)

	for rng, script := range map[string]string{"1-5": "1,5p", "398-402": "398,402p", "4999-": "4999,$p", "5000": "5000p"} {
		r, err := ParseRange(rng)
		require.NoError(t, err)
		out, err := ReadLines(ctx, Body(bytes.NewReader(data)), r, false, big)
		require.NoError(t, err)
		assert.Equal(t, runTool(t, sed, "-n", script, file), out.Text, "lines %s", rng)
	}
}

// TestBodyOfRecords: the records of other results are their JSON lines,
// numbered from the first record.
func TestBodyOfRecords(t *testing.T) {
	recs := `{"id":1,"text":"a"}` + "\n" + `{"line":2,"text":"x","path":"a.go"}` + "\n" + `[1,2]` + "\n"
	for _, data := range []string{testHeader + recs, testHeader + `{"line":1,"text":"x","path":"a.go"}` + "\n" + recs} {
		got, err := io.ReadAll(Body(strings.NewReader(data)))
		require.NoError(t, err)
		assert.Equal(t, strings.TrimPrefix(data, testHeader), string(got))
	}
	for _, data := range []string{"", testHeader, strings.TrimSuffix(testHeader, "\n")} {
		got, err := io.ReadAll(Body(strings.NewReader(data)))
		require.NoError(t, err)
		assert.Empty(t, got, "%q", data)
	}
}

// TestBodyDecodesJSON: each escape JSON has, wherever a read buffer cuts
// it, decodes as encoding/json decodes it; a newline in a text stays \n.
func TestBodyDecodesJSON(t *testing.T) {
	pieces := []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u003c`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\u000A`, `é😀`}
	var lines, want []string
	for cut := BufSize - 40; cut <= BufSize+4; cut++ {
		for _, p := range pieces[cut%len(pieces):][:1] {
			lead := `{"line":` + fmt.Sprint(len(lines)+1) + `,"text":"`
			s := lead + strings.Repeat("a", cut-len(lead)) + p + "z" + p + `"}`
			lines = append(lines, s)
			var v struct{ Text string }
			require.NoError(t, json.Unmarshal([]byte(s), &v), s[len(s)-40:])
			want = append(want, strings.ReplaceAll(v.Text, "\n", `\n`))
		}
	}
	got, err := io.ReadAll(Body(strings.NewReader(testHeader + strings.Join(lines, "\n") + "\n")))
	require.NoError(t, err)
	assert.Equal(t, strings.Join(want, "\n")+"\n", string(got))
}

// TestBodyRefusesWhatIsNotAText: once a file is read as a text, a record
// that is not one of its lines is an error naming it, never a line made
// up.
func TestBodyRefusesWhatIsNotAText(t *testing.T) {
	for rec, why := range map[string]string{
		`{"id":3}`:                        `not {"line":N,"text":"..."}`,
		`{"line":1,"text":"again"}`:       "line 1 after line 2",
		`{"line":3,"text":"a","more":1}`:  "more than line and text",
		`{"line":3,"text":"a"`:            "no closing brace",
		`{"line":3,"text":"a`:             "its line ends inside its text",
		`{"line":3,"text":"\x"}`:          "a bad escape",
		`{"line":3,"text":"\u12"}`:        `a bad \u escape`,
		`{"line":3,"text":"a"}{"line":4}`: "more than line and text",
		`{"line":03,"text":"a"}`:          `not {"line":N,"text":"..."}`,
		`{"line":3,"text":"a"} ` + "\t\r": "", // spaces after a record are fine
	} {
		data := testHeader + `{"line":1,"text":"a"}` + "\n" + `{"line":2,"text":"b"}` + "\n" + rec + "\n"
		_, err := io.ReadAll(Body(strings.NewReader(data)))
		if why == "" {
			assert.NoError(t, err, rec)
			continue
		}
		if assert.Error(t, err, rec) {
			assert.Equal(t, "record 3 is not a line of the text ("+why+"): read the file with query instead", err.Error(), rec)
		}
	}
	_, err := io.ReadAll(Body(strings.NewReader(testHeader + `{"line":1,"text":"a"}` + "\n" + `{"line":2,"text":"b`)))
	assert.EqualError(t, err, "record 2 is not a line of the text (its line ends inside its text): read the file with query instead")
}

// BenchmarkGrepText: grep over a text offloaded as its lines, which Body
// decodes, beside the floor, the same grep over the text itself.
func BenchmarkGrepText(b *testing.B) {
	text := diffText(50000)
	file := offloadedText(b, text)
	q := Query{Pattern: `^\+func Test`}
	for _, c := range []struct {
		name string
		r    func() io.Reader
	}{
		{"floor=plain text", func() io.Reader { return strings.NewReader(text) }},
		{"offloaded text", func() io.Reader { return Body(bytes.NewReader(file)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				out, err := Grep(context.Background(), c.r(), q, Limits{Budget: 8 << 10})
				if err != nil || out.Matches == 0 {
					b.Fatal(err, out.Matches)
				}
			}
		})
	}
}

// FuzzBody: any text, encoded as encoding/json encodes a string and read
// back through Body, is the text, a newline in it aside (\n stays two
// characters) and invalid UTF-8 replaced as encoding/json replaces it.
func FuzzBody(f *testing.F) {
	for _, s := range []string{"", "a", `"\`, "é😀\u2028<>&", "\x00\x1f\x7f", "\xff\xfe", strings.Repeat(`\"`, BufSize/2+3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		quoted, err := json.Marshal(s)
		require.NoError(t, err)
		var want string
		require.NoError(t, json.Unmarshal(quoted, &want))
		data := testHeader + `{"line":1,"text":` + string(quoted) + "}\n"
		got, err := io.ReadAll(Body(strings.NewReader(data)))
		require.NoError(t, err)
		assert.Equal(t, strings.ReplaceAll(want, "\n", `\n`)+"\n", string(got))
	})
}
