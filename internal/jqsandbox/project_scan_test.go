package jqsandbox

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/jsonvalue"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/require"
)

// scanProjections are the projections the decoder tests try on a line.
var scanProjections = []string{`.title`, `{id, namespace}`, `.provenance.confidence`, `.tags`, `.meta.a`, `.provenance`}

// checkProjectedLine: the projecting decoder accepts only lines that
// jsonscan.Valid accepts, and decodes them as decoding them whole and
// projecting would. (It may refuse valid lines it does not handle; the
// caller decodes those whole.)
func checkProjectedLine(t *testing.T, line []byte) {
	t.Helper()
	valid := jsonscan.Valid(line)
	for _, query := range scanProjections {
		q, err := CompileTrusted(query, nil)
		require.NoError(t, err)
		p := q.Projection(Stream)
		pd := projDecoder{root: p.root, dec: &jsonvalue.Decoder{Orders: jsonvalue.NewKeyOrders()}}
		got, ok := pd.decode(line)
		if !ok {
			continue
		}
		require.True(t, valid, "accepted a line Valid refuses: %q", line)
		var dec jsonvalue.Decoder
		whole, err := dec.Decode(line)
		require.NoError(t, err, "%q", line)
		require.Equal(t, projectValue(whole, p.root), got, "%s of %q", query, line)
	}
}

// TestProjectedDecoderValidates mutates valid lines (a byte changed,
// removed, inserted; the line cut) and checks each: 100 mutations of each
// line by default, 300 with LRO_TEST_FULL.
func TestProjectedDecoderValidates(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(projInput+sampleJSONL), "\n")
	lines = append(lines,
		`{"title":"a\u00e9\n\"q\"","n":-0.5e+3,"x":[true,false,null,{}],"y":{"z":[]}}`,
		`  {"title" : "t" , "id" : 1e9 , "namespace" : [ ] }  `,
		`{"title":"\ud800"}`, `{}`, `{"a":{"b":{"c":{"d":[[[1]]]}}}}`,
	)
	bad := []string{`{"title":"a`, `{"title":01}`, `{"title":1.}`, `{"title":1e}`, `{"title":-}`, `{"title":tru}`,
		`{"title":"\x01"}`, `{"title":"\q"}`, `{"title":"\u12g4"}`, `{"title":1,}`, `{"title":[1,]}`, `{"title" 1}`,
		`{"title":1}}`, `{"title":1} x`, `{title:1}`, `{"a":1 "b":2}`, `{"a":[1 2]}`, `{"a":{"b":1}`, `["x"]`, `{"a":nul}`}
	for _, b := range bad {
		checkProjectedLine(t, []byte(b))
	}
	mutations := 100
	if testenv.Full() {
		mutations = 300
	}
	r := rand.New(rand.NewPCG(3, 4))
	chars := []byte(`{}[]":,\ 0123456789-+.eEtrufalsn` + "\x00\x1f\x7f\xff")
	for _, l := range lines {
		checkProjectedLine(t, []byte(l))
		if l == "" {
			continue
		}
		for range mutations {
			b := []byte(l)
			switch i := r.IntN(len(b)); r.IntN(4) {
			case 0:
				b[i] = chars[r.IntN(len(chars))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			case 2:
				b = append(b[:i], append([]byte{chars[r.IntN(len(chars))]}, b[i:]...)...)
			default:
				b = b[:i]
			}
			checkProjectedLine(t, b)
		}
	}
}

// FuzzProjectedDecoder: whatever the line, the projecting decoder never
// accepts what jsonscan.Valid refuses, and decodes the rest as whole
// decoding does.
func FuzzProjectedDecoder(f *testing.F) {
	for _, l := range strings.Split(strings.TrimSpace(projInput+sampleJSONL), "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 4<<10 {
			return
		}
		checkProjectedLine(t, line)
	})
}
