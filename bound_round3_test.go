package lro_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
)

// The review of issue 41: what the gate of issue 30 did not see. An
// embedded text resource whose uri was "" was neither offloaded nor cut
// (2,041,168 bytes on mcp-go and the official SDK against a bound of
// about 6.9 KB); on the official SDK a resource of 2 MB of text and a
// 1-byte blob was judged binary and passed whole (2,041,191 bytes); 2 MB
// of a result's _meta rode on the descriptor (2,044,480 bytes) on every
// path. Each is judged now: the answers below are within the bound.
func TestEveryItemAndMetaJudged(t *testing.T) {
	big := strings.Repeat(`{"id":1,"title":"a record of the set, long enough"},`, 40000)
	big = "[" + big[:len(big)-1] + "]"
	meta := map[string]any{"trace": strings.Repeat("m", 2<<20)}
	hosts := append(slices.Clone(boundHosts), boundHost{"core", each(coreBoundAnswer)})
	cases := []struct {
		name string
		r    boundResult
		only []string
	}{
		{"2 MB resource of no uri", boundResult{resource: big, noURI: true}, nil},
		{"2 MB resource of text and a blob", boundResult{resource: big, blob: true}, []string{"official SDK", "core"}},
		{"2 MB of _meta", boundResult{texts: []string{big}, meta: meta}, nil},
		{"2 MB of _meta beside a small text", boundResult{texts: []string{"done"}, meta: meta}, nil},
	}
	for _, h := range hosts {
		for _, c := range cases {
			if c.only != nil && !slices.Contains(c.only, h.name) {
				continue
			}
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				o := boundOffloader(t, lro.DeliveryDescriptor, nil)
				a := h.answer(t, o, c.r)
				assertBound(t, o, a, c.name)
				if c.r.meta != nil {
					assert.NotContains(t, string(a.meta), `"trace"`, "the _meta that does not fit is dropped (an SDK may add its own)")
					assert.True(t, slices.ContainsFunc(a.texts, func(s string) bool { return strings.Contains(s, "_meta") }), "the answer says the _meta was left out")
				}
			})
		}
	}
}

// A _meta that fits beside the answer goes out as the handler set it,
// inline and beside a descriptor.
func TestSmallMetaKept(t *testing.T) {
	meta := map[string]any{"trace": "abc-123"}
	for _, h := range []boundHost{boundHosts[0], boundHosts[1], {"core", each(coreBoundAnswer)}} {
		for _, texts := range [][]string{{"done"}, {mustJSON(t, tickets(100))}} {
			t.Run(fmt.Sprintf("%s/%d bytes", h.name, len(texts[0])), func(t *testing.T) {
				o := boundOffloader(t, lro.DeliveryDescriptor, nil)
				a := h.answer(t, o, boundResult{texts: texts, meta: meta})
				assertBound(t, o, a, "a small _meta")
				assert.Contains(t, string(a.meta), `"trace":"abc-123"`, "the _meta is kept")
				assert.False(t, slices.ContainsFunc(a.texts, func(s string) bool { return strings.Contains(s, "_meta") }), "no note")
			})
		}
	}
}
