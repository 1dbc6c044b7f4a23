package adapt

// PageSizes are the names of the argument by which a paged tool takes its
// page size, as the engine looks for them: in the call's arguments, then in
// the tool's input schema.
var PageSizes = []string{"limit", "page_size", "pageSize", "per_page", "perPage", "max_results", "maxResults"}

// Reads reports whether the engine reads the call argument name (see
// host.Call): an adapter that decodes only those decodes it. It takes the
// name's bytes, which it compares without copying them.
func Reads(name []byte) bool {
	switch string(name) {
	case "detail", "query":
		return true
	}
	for _, p := range PageSizes {
		if string(name) == p {
			return true
		}
	}
	return false
}
