package jsonscan

import "math/bits"

// Lookup returns the raw value of the top-level member key of the JSON
// object in data. It expects valid JSON (other text gets some answer,
// never a panic), compares keys as written, with their escapes, and
// allocates nothing: offloading a set looks up one member of every
// record, its namespace. So it scans the strings of the members it passes
// over eight bytes at a time, in one load each, and goes straight to the
// end of a string, where a validating scan looks at every byte.
func Lookup(data []byte, key string) (value []byte, ok bool) {
	i, err := objectStart(data)
	if err != nil {
		return nil, false
	}
	atKey := true  // a key is at i, not a value
	match := false // the value at i is key's
	for i < len(data) {
		start, end := i, 0
		switch {
		case data[i] == '"':
			end = stringEnd(data, i+1)
		case atKey:
			return nil, false // the end of the object
		default:
			end = skipValue(data, i)
		}
		if atKey {
			match = end-start-2 == len(key) && string(data[start+1:end-1]) == key
			i = skipSpace(data, end)
			i = skipSpace(data, i+1) // past ':'
			atKey = false
			continue
		}
		if match {
			return data[start:end], true
		}
		if i = skipSpace(data, end); i >= len(data) || data[i] != ',' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		atKey = true
	}
	return nil, false
}

// stringEnd returns the index just past the string whose content starts
// at i, in valid text (in other text, at most len(data)).
func stringEnd(data []byte, i int) int {
	for {
		// Eight bytes at a time to the first quote or backslash (see
		// stops).
		for i+8 <= len(data) {
			w := load64(data, i)
			q, b := w^(lows*'"'), w^(lows*'\\')
			if m := ((q - lows) | (b - lows)) &^ w & highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(data) && data[i] != '"' && data[i] != '\\' {
			i++
		}
		if i+1 >= len(data) {
			return len(data)
		}
		if data[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the next byte is never the end
	}
}
