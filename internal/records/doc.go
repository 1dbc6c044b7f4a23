// Package records finds the records of a tool result and holds them in
// place: it slices the result's bytes (a JSON array, the members of an
// object, a tree, the sections of an object, the lines of a text) without
// decoding them, and rebuilds the result with fewer records for an inline
// fallback.
//
// It owns:
//
//   - [Record] and [Source], the records of one set as the engine reads
//     them (a slice, a view of a result's bytes, the lines of a text),
//     each once, in order;
//   - [FindLayout], which finds where the records of a result sit
//     ([Layout]: its [Section]s, the small fields beside them, an active
//     pagination cursor), and [Layout.Truncated], which rebuilds the
//     result cut to its first records;
//   - the bounds on what a descriptor copies from a result
//     ([BoundExtra], [ClipCopied]) and the JSON text helpers the engine
//     writes with ([MarshalText], without HTML escapes).
//
// It knows nothing of files, delivery or hosts; the package lro composes
// it.
package records
