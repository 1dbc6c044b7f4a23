package lro

// maxCopiedBytes bounds what of a string that came with a result (its
// query, a namespace) is copied into a file's header or a descriptor: a
// few hundred bytes say what it was, and a 2 MB query echoed into the
// header would make the file unreadable by lro_extract, which reads
// headers up to maxHeaderBytes.
const maxCopiedBytes = 512

// clipCopied returns s, or its first maxCopiedBytes (at a character
// boundary) followed by "…" when it is longer.
func clipCopied(s string) string {
	if len(s) <= maxCopiedBytes {
		return s
	}
	return clipText(s, maxCopiedBytes) + "…"
}
