package adapt

// Replaced returns tools with each tool t replaced by u where
// change(t) returns u, true. The tools are a server's own, which must not
// change: the slice is copied at the first tool replaced, and tools
// itself is returned when none is.
func Replaced[T any](tools []T, change func(T) (T, bool)) []T {
	var out []T // made at the first tool changed
	for i, t := range tools {
		if u, ok := change(t); ok {
			if out == nil {
				out = append(make([]T, 0, len(tools)), tools[:i]...)
			}
			out = append(out, u)
			continue
		}
		if out != nil {
			out = append(out, t)
		}
	}
	if out == nil {
		return tools
	}
	return out
}
