package records

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// MaxCopiedBytes bounds what of a string that came with a result (its
// query, a namespace) is copied into a file's header or a descriptor: a
// few hundred bytes say what it was, and a 2 MB query echoed into the
// header would make the file unreadable by lro_extract, which reads
// headers up to maxHeaderBytes.
const MaxCopiedBytes = 512

// ClipCopied returns s, or its first MaxCopiedBytes (at a character
// boundary) followed by "…" when it is longer.
func ClipCopied(s string) string {
	if len(s) <= MaxCopiedBytes {
		return s
	}
	return ClipText(s, MaxCopiedBytes) + "…"
}

// Bounds on the fields a descriptor's summary copies from ResultSet.Extra:
// the middleware keeps them small already (see Layout.bound), but a
// caller of Offload, or a result of many small fields, may pass anything.
// Together they stay within maxExtraBytes, so that the descriptor keeps
// to its budget of 700 tokens whatever the keys: 40 fields of 120-byte
// names made 5.7 KB of it.
const (
	maxExtraFields = 32
	maxNameBytes   = 32  // a section's path
	maxExtraName   = 48  // a field name in summary.extra
	maxExtraValue  = 96  // a value copied whole into summary.extra
	maxExtraBytes  = 128 // the names and values of summary.extra together
)

// ExtraCutKey is the member of a summary's extra that says how many
// fields were left out of it, when some were.
const ExtraCutKey = "…[cut]"

// BoundExtra returns extra within maxExtraBytes: fields in the order of
// their names, names cut to maxExtraName and each value over
// maxExtraValue replaced by a string that gives its size, while they fit;
// the fields left out are counted under ExtraCutKey. The records in the
// file hold what the result had, the summary only points at it.
func BoundExtra(extra map[string]json.RawMessage) map[string]json.RawMessage {
	small, size := len(extra) <= maxExtraFields, 0
	for k, v := range extra {
		size += len(k) + len(v)
		small = small && len(k) <= maxExtraName && len(v) <= maxExtraValue
	}
	if small && size <= maxExtraBytes {
		return extra
	}
	keys := slices.Sorted(maps.Keys(extra))
	out := make(map[string]json.RawMessage, min(len(keys), maxExtraFields))
	used := 0
	for i, k := range keys {
		v := extra[k]
		if len(v) > maxExtraValue {
			v, _ = json.Marshal(fmt.Sprintf("(%d bytes, not copied)", len(v)))
		}
		name := clipTo(k, maxExtraName)
		if len(out) == maxExtraFields || used+len(name)+len(v) > maxExtraBytes {
			out[ExtraCutKey], _ = json.Marshal(fmt.Sprintf("%d more fields left out", len(keys)-i))
			break
		}
		used += len(name) + len(v)
		out[name] = v
	}
	return out
}

// clipName returns a field name or path cut to maxNameBytes.
func clipName(s string) string { return clipTo(s, maxNameBytes) }

// clipTo returns s, or its first n bytes (at a character boundary)
// followed by "…" when it is longer.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return ClipText(s, n) + "…"
}
