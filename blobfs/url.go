package blobfs

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcplro/lro"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // s3:// for gocloud's URL mux
)

func init() { Register("s3") }

// Register makes Config.OutputDir URLs of each scheme open through [Open]
// (see [lro.RegisterStore]). s3 is registered when the package is
// imported; for another gocloud driver, import it and register its
// scheme, once, before lro.New:
//
//	import _ "gocloud.dev/blob/gcsblob"
//
//	blobfs.Register("gs")
//
// Like lro.RegisterStore, it panics if a scheme is registered already.
func Register(schemes ...string) {
	for _, scheme := range schemes {
		lro.RegisterStore(scheme, func(ctx context.Context, u *url.URL) (lro.FS, error) {
			return Open(ctx, u.String())
		})
	}
}

// Open opens the bucket that rawURL names through gocloud's URL mux and
// returns the FS of its objects under the URL's path:
//
//	s3://bucket/prefix?region=eu-west-1
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1
//
// The query holds the driver's parameters (see gocloud.dev/blob/s3blob),
// timeout, which bounds each request as [WithTimeout] does, and
// probe_interval, the time between two probes of a store found down, as
// [WithProbeInterval] sets it (options given to Open come after them);
// the path, not a prefix parameter, is the
// folder the files live in. No
// request is made: a store that is down makes the operations fail, not
// Open. Files are shown to the model as the URL without its query. Close
// the FS to close the bucket.
func Open(ctx context.Context, rawURL string, opts ...Option) (*FS, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blobfs: %w", err)
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%w %q: want scheme://bucket/prefix, such as s3://my-bucket/lro", ErrUnsupportedURL, redact(u))
	}
	if u.Query().Has("prefix") {
		return nil, fmt.Errorf("%w %q: put the prefix in the path (s3://bucket/prefix), not in a prefix parameter", ErrUnsupportedURL, redact(u))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w %q: credentials do not belong in the URL; they come from the driver's standard chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, ...)", ErrUnsupportedURL, redact(u))
	}
	// timeout and probe_interval are ours, not the driver's: take them
	// out of the query.
	q := u.Query()
	for _, p := range []struct {
		name string
		opt  func(time.Duration) Option
	}{{"timeout", WithTimeout}, {"probe_interval", WithProbeInterval}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w %q: %s=%q: want a positive duration such as 30s", ErrUnsupportedURL, redact(u), p.name, v)
		}
		opts = append([]Option{p.opt(d)}, opts...)
		q.Del(p.name)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	bucketURL := *u
	bucketURL.Path, bucketURL.RawPath, bucketURL.RawQuery = "", "", q.Encode()
	b, err := blob.OpenBucket(ctx, bucketURL.String())
	if err != nil {
		return nil, fmt.Errorf("blobfs: opening %s: %w", redact(u), err)
	}
	location := strings.ToLower(u.Scheme) + "://" + u.Host + "/" + prefix
	f, err := New(b, prefix, append([]Option{WithLocation(location)}, opts...)...)
	if err != nil {
		b.Close()
		return nil, err
	}
	f.ownsB = true
	return f, nil
}

// redact returns u without its query and user information, for errors.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.User, c.Fragment = "", nil, ""
	return c.String()
}
