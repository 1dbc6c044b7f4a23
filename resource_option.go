package lro

import "github.com/mcplro/lro/internal/textlines"

// WithoutResourceLinks turns the MCP-native pointer off: offloaded results
// carry no resource link, and [Offloader.ServeResources] (and so
// [Offloader.AddResources] and the go-sdk adapter's AddResources)
// registers nothing. By default a server that registers the resource
// templates answers resources/read for offloaded files and links every
// offloaded result to its file.
func WithoutResourceLinks() Option {
	return func(o *options) { o.resourcesOff = true }
}

// WithResourceMaxBytes sets the most resources/read returns at once: a
// whole file up to n bytes, and a range of lines up to n bytes (a longer
// line is cut). A larger file gets an error that points to line ranges and
// lro_extract. The default is [DefaultResourceMaxBytes] (1 MiB); n <= 0
// keeps it; n is at least 256 bytes and at most 1 GiB, since a read is
// built in memory.
func WithResourceMaxBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.resourceMaxBytes = min(max(n, textlines.MinBudget), maxResourceRead)
		}
	}
}
