package blobfs_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/mcplro/lro/internal/testenv"
	"gocloud.dev/blob"
)

// envS3 names the environment variable that points the store tests at a
// real S3-compatible server instead of the in-process fake: a store URL
// such as
//
//	LRO_TEST_S3_URL='s3://lro-test/ci?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1'
//
// with the credentials in the AWS SDK's standard chain (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY); testdata/versitygw/test.sh sets both for the
// Versity S3 Gateway it starts. Each test works under a throwaway prefix of its
// own below the URL's path, and deletes what it wrote. The tests that make
// the store fail (deny, hang, a wrong signature, down) run too: the
// server is reached through a proxy on loopback that injects the faults.
const envS3 = "LRO_TEST_S3_URL"

// fakeS3 is an S3-compatible server on loopback: the in-process fake, or,
// with LRO_TEST_S3_URL set, a proxy to the real server it names. The code
// under test reaches it over HTTP through the AWS SDK, as it would S3.
type fakeS3 struct {
	srv  *httptest.Server
	deny atomic.Bool // answer every request 403 AccessDenied
	hang atomic.Bool // answer no request, until the client gives up
	// down closes every connection without an answer, as a store that is
	// down does, while the port stays this server's: a closed listener's
	// port may be taken by another test's server, which answers 404.
	down atomic.Bool
	// badSignature answers every request 403 SignatureDoesNotMatch, as
	// S3 does to a wrong secret key.
	badSignature atomic.Bool
	bucket       string
	base         string     // the prefix of this test's objects: "" or ending in "/"
	query        url.Values // the URL's query, endpoint aside
	real         bool

	mu       sync.Mutex
	requests []string // "METHOD path" of every request that reached the server, faults included
}

// count returns how many requests of method reached the server whose path
// ends in suffix ("" for any).
func (f *fakeS3) count(method, suffix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		m, path, _ := strings.Cut(r, " ")
		if (method == "" || m == method) && strings.HasSuffix(path, suffix) {
			n++
		}
	}
	return n
}

// startS3 starts the server with one bucket, or the proxy to the real
// one (TestMain gives the AWS SDK the fake's test keys). It skips the
// test where no loopback port can be opened.
func startS3(t testing.TB) *fakeS3 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on loopback for the S3 server: %v", err)
	}
	f := &fakeS3{bucket: "replicas", query: url.Values{"region": {"us-east-1"}, "use_path_style": {"true"}}}
	var h http.Handler
	if raw := os.Getenv(envS3); raw != "" {
		h = f.proxy(t, raw)
	} else {
		backend := s3mem.New()
		if err := backend.CreateBucket(f.bucket); err != nil {
			t.Fatal(err)
		}
		h = gofakes3.New(backend, gofakes3.WithoutVersioning()).Server()
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		if f.down.Load() {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler) // closes the connection
		}
		if f.hang.Load() {
			// Read the body first: only then does the server notice that
			// the client hung up.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		if f.badSignature.Load() {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			if r.Method != http.MethodHead {
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message></Error>`)
			}
			return
		}
		if f.deny.Load() {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	f.srv.Listener.Close()
	f.srv.Listener = l
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// proxy returns the handler that forwards to the real server raw names,
// and sets f's bucket, throwaway prefix and query from raw. The objects
// under the prefix are deleted when the test ends.
func (f *fakeS3) proxy(t testing.TB, raw string) http.Handler {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		t.Fatalf("%s=%q: want s3://bucket/prefix?endpoint=...", envS3, raw)
	}
	q := u.Query()
	endpoint, err := url.Parse(q.Get("endpoint"))
	if err != nil || endpoint.Host == "" {
		t.Fatalf("%s: want an endpoint=http(s)://host:port parameter", envS3)
	}
	q.Del("endpoint")
	f.real, f.bucket, f.query = true, u.Host, q
	if p := strings.Trim(u.Path, "/"); p != "" {
		f.base = p + "/"
	}
	f.base += fmt.Sprintf("lro-test-%d-%s/", time.Now().Unix(), rand.Text()[:8])
	f.ensureBucket(t, q, endpoint)
	t.Cleanup(func() { f.clean(t, q, endpoint) })
	// The Host header stays the proxy's: the SDK signed the request for it.
	return httputil.NewSingleHostReverseProxy(endpoint)
}

// direct opens the bucket on the real server, not through the proxy.
func (f *fakeS3) direct(ctx context.Context, q url.Values, endpoint *url.URL) (*blob.Bucket, error) {
	q = cloneValues(q)
	q.Set("endpoint", endpoint.String())
	return blob.OpenBucket(ctx, "s3://"+f.bucket+"?"+q.Encode())
}

// ensureBucket creates the bucket on the real server unless it exists, so
// that a fresh MinIO needs no other step.
func (f *fakeS3) ensureBucket(t testing.TB, q url.Values, endpoint *url.URL) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := f.direct(ctx, q, endpoint)
	if err != nil {
		t.Fatalf("%s: %v", envS3, err)
	}
	defer b.Close()
	var c *s3.Client
	if !b.As(&c) {
		t.Fatalf("%s: not an S3 bucket", envS3)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &f.bucket}); err == nil {
		return
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &f.bucket}); err != nil {
		t.Fatalf("%s: creating the bucket %s: %v", envS3, f.bucket, err)
	}
}

// clean deletes the objects under the test's prefix on the real server.
func (f *fakeS3) clean(t testing.TB, q url.Values, endpoint *url.URL) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := f.direct(ctx, q, endpoint)
	if err != nil {
		t.Errorf("cleaning %s: %v", f.base, err)
		return
	}
	defer b.Close()
	it := b.List(&blob.ListOptions{Prefix: f.base})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Errorf("cleaning %s: %v", f.base, err)
			return
		}
		if err := b.Delete(ctx, obj.Key); err != nil {
			t.Errorf("cleaning %s: %v", obj.Key, err)
		}
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// url returns the store URL of prefix (below the test's own prefix).
func (f *fakeS3) url(prefix string) string {
	q := cloneValues(f.query)
	q.Set("endpoint", f.srv.URL)
	return f.loc(prefix) + "?" + q.Encode()
}

// tryOnce is the URL parameter that makes the AWS SDK try each request
// once, for the tests that make the store drop connections (down): the
// SDK's retry quota, gocloud's rate_limiter_capacity, holds fewer tokens
// than one retry costs (5). Each time such a test finds the store down,
// it then waits none of the SDK's backoff (up to 6 s, 3 s on average),
// which is the SDK's and proves nothing of blobfs. With LRO_TEST_FULL
// (CI) the tests wait the retries out, as a server would.
func tryOnce() string {
	if testenv.Full() {
		return ""
	}
	return "&rate_limiter_capacity=1"
}

// loc returns the URL of prefix as the model is shown it: without query.
func (f *fakeS3) loc(prefix string) string {
	return "s3://" + f.bucket + "/" + f.base + prefix
}
