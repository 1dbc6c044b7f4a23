package lro_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOffloadCheckingRecords: an offload that checks its records as it
// estimates them (lro-checking-records above) gives the outcome and the
// lines that one of the same records marked Validated gives, records
// that are not ASCII or hold line breaks among them; and it rejects a
// record that is not JSON as an offload always did: with the same
// *RecordError when the set is offloaded, not at all when it is not.
func TestOffloadCheckingRecords(t *testing.T) {
	recs := memories(t, 50, lro.DetailFull)
	recs[3] = json.RawMessage(strings.Replace(string(recs[3]), `"title":"`, `"title":"Café 東京 `, 1))
	pretty, err := json.MarshalIndent(recs[7], "", "\t")
	require.NoError(t, err)
	recs[7] = pretty
	// A break of '\r' alone, after a non-ASCII rune: both ways compact
	// it.
	recs[11] = json.RawMessage(strings.Replace(string(recs[11]), `"title":`, "\r \"é\":1,\r\"title\":", 1))
	for _, generic := range []bool{false, true} {
		var outs [2]lro.Outcome
		var lines [2][][]byte
		for k, validated := range []bool{true, false} {
			o := newOffloader(t, nil)
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs, Validated: validated, Generic: generic})
			require.NoError(t, err)
			require.Equal(t, lro.Offloaded, out.Action)
			outs[k] = out
			_, lines[k] = readJSONL(t, readFile(t, out.Response.FilePath))
		}
		assert.Equal(t, outs[0].Tokens, outs[1].Tokens, "generic: %v", generic)
		assert.Equal(t, outs[0].Response.Summary, outs[1].Response.Summary, "generic: %v", generic)
		assert.Equal(t, lines[0], lines[1], "generic: %v", generic)
		require.Len(t, lines[0], len(recs))
		assert.NotContains(t, string(lines[0][11]), "\r", "compacted")
	}

	o := newOffloader(t, nil)
	bad := append(slices.Clone(recs), json.RawMessage(`{"a":1,}`))
	_, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: bad})
	var re *lro.RecordError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, len(recs), re.Index)
	_, unestimated := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: bad, Tokens: 1 << 20})
	require.Error(t, unestimated)
	assert.Equal(t, unestimated.Error(), err.Error())
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: []json.RawMessage{json.RawMessage(`{not json`)}})
	require.NoError(t, err, "a set that is not offloaded is not checked")
	assert.Equal(t, lro.Inline, out.Action)
	entries, _ := os.ReadDir(o.Config().OutputDir)
	assert.Empty(t, entries, "no file for rejected records")
}
