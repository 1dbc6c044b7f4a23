package blobfs

import (
	"time"

	"github.com/mcplro/lro"
)

// DefaultTimeout bounds one request to the store unless [WithTimeout]
// says otherwise: the upload of a file, the reading of one, a listing or a
// deletion.
const DefaultTimeout = 2 * time.Minute

// An Option configures [New] or [Open].
type Option func(*options)

type options struct {
	timeout  time.Duration
	maxBytes int64
	location string
}

func defaultOptions() options {
	return options{timeout: DefaultTimeout, maxBytes: lro.DefaultMaxFileBytes}
}

// WithTimeout bounds each request to the store, retries included; the
// default is [DefaultTimeout]. A store that does not answer in time fails
// the operation (and the offload falls back) instead of holding the tool
// call. d <= 0 keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithMaxObjectBytes caps the bytes one file may hold while it is
// buffered before its upload; a larger one fails its write, and the
// offload falls back. The default is [lro.DefaultMaxFileBytes], the
// engine's own per-file cap. n <= 0 keeps the default.
func WithMaxObjectBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxBytes = n
		}
	}
}

// WithLocation sets the URL that files are shown under: Path(name) is the
// location, a slash, and the name. [Open] sets it to the URL without its
// query (s3://bucket/prefix); for [New] the default is "blob://" and the
// prefix, which tells the model the file is not on its disk.
func WithLocation(url string) Option {
	return func(o *options) { o.location = url }
}
