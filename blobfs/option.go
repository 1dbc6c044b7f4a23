package blobfs

import (
	"time"

	"github.com/mcplro/lro"
)

// DefaultTimeout bounds one request to the store unless [WithTimeout]
// says otherwise: a listing's page, a deletion, the metadata of an
// object, and the start of an upload or a read. An upload or a read is
// given, beyond it, the time its bytes take at [DefaultMinThroughput]:
// the upload of a 1 MiB file 10 s, of a 256 MiB file (the engine's
// per-file cap) 26 s. A store that hangs costs a tool call no more: the
// offload falls back to the truncated inline result.
const DefaultTimeout = 10 * time.Second

// DefaultMinThroughput is the slowest transfer, in bytes a second, that
// an upload or a read is given time for beyond [DefaultTimeout], unless
// [WithMinThroughput] says otherwise: 16 MiB/s, a tenth of what one
// stream to S3 from the same region reaches.
const DefaultMinThroughput = 16 << 20

// An Option configures [New] or [Open].
type Option func(*options)

type options struct {
	timeout  time.Duration
	rate     int64 // bytes a second
	maxBytes int64
	location string
	probe    time.Duration
}

func defaultOptions() options {
	return options{timeout: DefaultTimeout, rate: DefaultMinThroughput, maxBytes: lro.DefaultMaxFileBytes, probe: DefaultProbeInterval}
}

// WithProbeInterval sets the time between two probes of a store found
// down; the default is [DefaultProbeInterval]. Meanwhile every operation
// fails at once (the offload falls back) instead of waiting its timeout;
// the first probe the store answers ends the outage. d <= 0 keeps the
// default.
func WithProbeInterval(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.probe = d
		}
	}
}

// WithTimeout bounds each request to the store, retries included; the
// default is [DefaultTimeout]. An upload or a read gets d plus the time
// of its bytes at the minimum throughput ([WithMinThroughput]). A store
// that does not answer in time fails the operation (and the offload falls
// back) instead of holding the tool call. d <= 0 keeps the default.
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

// WithMinThroughput sets the slowest transfer, in bytes a second, that an
// upload or a read is given time for beyond the timeout: a file of n
// bytes has WithTimeout's d + n/bps. The default is
// [DefaultMinThroughput]; bps <= 0 keeps it.
func WithMinThroughput(bps int64) Option {
	return func(o *options) {
		if bps > 0 {
			o.rate = bps
		}
	}
}

// bound returns the time allowed to a request that moves n bytes.
func (o options) bound(n int64) time.Duration {
	return o.timeout + time.Duration(float64(n)/float64(o.rate)*float64(time.Second))
}
