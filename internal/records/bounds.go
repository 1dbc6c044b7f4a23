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
// caller of Offload may pass anything.
const (
	maxExtraFields = 32
	maxNameBytes   = 128 // a field name or a section's path
)

// BoundExtra returns extra with at most maxExtraFields fields, names cut
// to maxNameBytes and each value over MaxCopiedBytes replaced by a string
// that gives its size: the records in the file hold what the result had,
// the summary only points at it.
func BoundExtra(extra map[string]json.RawMessage) map[string]json.RawMessage {
	small := len(extra) <= maxExtraFields
	for k, v := range extra {
		small = small && len(k) <= maxNameBytes && len(v) <= MaxCopiedBytes
	}
	if small {
		return extra
	}
	keys := slices.Sorted(maps.Keys(extra))
	out := make(map[string]json.RawMessage, min(len(keys), maxExtraFields))
	for _, k := range keys[:min(len(keys), maxExtraFields)] {
		v := extra[k]
		if len(v) > MaxCopiedBytes {
			v, _ = json.Marshal(fmt.Sprintf("(%d bytes, not copied)", len(v)))
		}
		out[clipName(k)] = v
	}
	return out
}

// clipName returns a field name or path cut to maxNameBytes.
func clipName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	return ClipText(s, maxNameBytes) + "…"
}
