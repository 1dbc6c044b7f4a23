package blobfs_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fakeS3 is an S3-compatible server on loopback, in this process: the code
// under test reaches it over HTTP through the AWS SDK, as it would S3.
type fakeS3 struct {
	srv  *httptest.Server
	deny atomic.Bool // answer every request 403 AccessDenied
	hang atomic.Bool // answer no request, until the client gives up
	// badSignature answers every request 403 SignatureDoesNotMatch, as
	// S3 does to a wrong secret key.
	badSignature atomic.Bool
	bucket       string
}

// startS3 starts a server with one bucket, and points the AWS SDK's
// standard credential chain at test keys (and away from the machine's own
// configuration). It skips the test where no loopback port can be opened.
func startS3(t testing.TB) *fakeS3 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on loopback for the S3 server: %v", err)
	}
	backend := s3mem.New()
	f := &fakeS3{bucket: "replicas"}
	if err := backend.CreateBucket(f.bucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend, gofakes3.WithoutVersioning())
	h := faker.Server()
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	awsEnv(t)
	return f
}

// awsEnv gives the AWS SDK test credentials from the environment, its
// standard chain, and no shared files of the machine's.
func awsEnv(t testing.TB) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
}

// url returns the store URL of prefix in the bucket.
func (f *fakeS3) url(prefix string) string {
	return "s3://" + f.bucket + "/" + prefix + "?region=us-east-1&use_path_style=true&endpoint=" + f.srv.URL
}
