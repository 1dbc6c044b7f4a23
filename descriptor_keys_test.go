package lro_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyedRecords is an array of n objects of keys members each, whose names
// are keyLen bytes long.
func keyedRecords(n, keys, keyLen int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for k := range keys {
			if k > 0 {
				b.WriteByte(',')
			}
			name := fmt.Sprintf("k%d_", k)
			fmt.Fprintf(&b, `%q:"v%d"`, name+strings.Repeat("x", max(keyLen-len(name), 0)), i)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// wideExtra is an object of records beside n fields of 120-byte names and
// 300-byte values, which go to the summary's extra.
func wideExtra(n int) string {
	var b strings.Builder
	b.WriteString(`{"rows":` + keyedRecords(300, 5, 10))
	for i := range n {
		fmt.Fprintf(&b, `,%q:%q`, fmt.Sprintf("e%d_", i)+strings.Repeat("e", 120), strings.Repeat("v", 300))
	}
	b.WriteByte('}')
	return b.String()
}

// nestedKeys is records under depth levels of objects of one member each,
// whose names are keyLen bytes long.
func nestedKeys(depth, keyLen int) string {
	var b strings.Builder
	for d := range depth {
		fmt.Fprintf(&b, `{%q:`, fmt.Sprintf("n%d_", d)+strings.Repeat("y", keyLen))
	}
	b.WriteString(keyedRecords(200, 5, 10))
	b.WriteString(strings.Repeat("}", depth))
	return b.String()
}

// longSections is an object of n large fields of 120-byte names, each an
// array of records of 20 fields of 60-byte names.
func longSections(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%q:%s`, fmt.Sprintf("s%d_", i)+strings.Repeat("s", 120), keyedRecords(100, 20, 60))
	}
	b.WriteByte('}')
	return b.String()
}

// Descriptors grew with hostile key shapes: records of 64 fields of
// 128-byte names made a 22 KB descriptor (the review's 16,709 bytes), 64
// of 60 bytes 12 KB (11,544), 300 short ones 5 KB, 40 fields of 120-byte
// names beside the records 5.7 KB of summary. The schema, the recipes and
// the summary's extra are bounded now: every descriptor is within the
// budget of 700 tokens, and what a schema leaves out is marked cut.
func TestDescriptorBudgetForAnyKeys(t *testing.T) {
	for _, c := range []struct {
		name, body string
		cut        bool // the schema leaves fields out
	}{
		{"64 fields of 128-byte names", keyedRecords(300, 64, 128), true},
		{"64 fields of 60-byte names", keyedRecords(300, 64, 60), true},
		{"300 fields of short names", keyedRecords(300, 300, 8), true},
		{"40 extra fields of long names", wideExtra(40), false},
		{"nested 20 deep, 128-byte names", nestedKeys(20, 125), false},
		{"nested 3 deep, 128-byte names", nestedKeys(3, 125), false},
		{"8 sections of long names", longSections(8), true},
	} {
		for _, native := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/native=%v", c.name, native), func(t *testing.T) {
				o := genericOffloader(t, lro.WithFS(lrotest.NewMemFS(dirFor("t"))))
				res, replaced, err := o.Host().Serve(ctx, host.Call{Tool: "t", NativeExtract: native},
					func(_ context.Context) (host.Result, error) {
						return host.Result{Content: []host.Content{host.TextContent(c.body)}}, nil
					})
				require.NoError(t, err)
				require.True(t, replaced)
				d, text := descriptorIn(t, res, 0)
				require.Len(t, d.FilePath, budgetPathLen)
				own := text
				if len(d.Sections) > 0 { // as TestDescriptorBudget measures it
					list := `,"sections":` + mustJSONText(t, d.Sections)
					require.Contains(t, text, list)
					own = strings.Replace(text, list, "", 1)
					assert.LessOrEqual(t, (len(text)-len(own))/4, sectionAllowance*len(d.Sections), "the sections list over its allowance:\n%s", list)
				}
				t.Logf("%d bytes, ~%d tokens (%d with its sections list)", len(own), len(own)/4, len(text)/4)
				assert.LessOrEqual(t, len(own)/4, descriptorBudget, "over budget:\n%s", own)
				assert.Equal(t, c.cut, strings.Contains(string(d.LineSchema), "more fields left out …[cut]"), "the schema's cut is marked: %s", d.LineSchema)
			})
		}
	}
}
