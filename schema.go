package lro

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"github.com/mcplro/lro/internal/jsonscan"
)

func compactJSON(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// topNamespaces returns up to n namespaces by number of records, most
// frequent first, ties in name order. It reads only the namespace field of
// each record, without decoding the rest.
func topNamespaces(records []json.RawMessage, n int) []string {
	// Pointer values let a lookup with a []byte key find the counter
	// without allocating; only a namespace seen for the first time does.
	counts := make(map[string]*int)
	add := func(name []byte) {
		if c := counts[string(name)]; c != nil {
			*c++
			return
		}
		one := 1
		counts[string(name)] = &one
	}
	for _, r := range records {
		v, ok := jsonscan.Lookup(r, "namespace")
		if !ok {
			continue
		}
		if s, ok := jsonscan.String(v); ok {
			add(s)
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			add([]byte(s))
		}
	}
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(*counts[b], *counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	names = names[:min(n, len(names))]
	for i := range names {
		names[i] = clipCopied(names[i])
	}
	return names
}
