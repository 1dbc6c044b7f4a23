package blobfs_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32.3: what the model is told is true. A wrong secret key was told
// "try again later", which cannot help: it is told that the store refused
// access, that the result is inline and cut, and that calling again will
// not help; lro_extract says that calling again will not help until its
// operator fixes that.
func TestWrongSecretIsNotTryAgainLater(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("lro")
	a := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	d := offload(t, a, 300).Response
	require.NotNil(t, d)

	// A replica with a wrong secret: the real server's own answer, or
	// the fake's.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-"+os.Getenv("AWS_SECRET_ACCESS_KEY"))
	s3.badSignature.Store(!s3.real)
	b := offloader(t, u, 3600, nil, lro.WithoutJanitor())

	out := offload(t, b, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assert.Contains(t, out.Warning, "the file store refused access")
	assert.Contains(t, out.Warning, "the result is truncated to")
	assert.Contains(t, out.Warning, "calling again will not help; narrow the call to get the rest")
	assert.NotContains(t, out.Warning, "again later")
	assertNoInternals(t, s3, out.Warning)

	_, err := b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the file store refused access; calling again will not help until the server's operator fixes that")
	assert.NotContains(t, err.Error(), "again later")
	assertNoInternals(t, s3, err.Error())
}

// Issue 32.3: credentials placed in the URL were told to the model as
// "the file store could not be reached"; the store is set up wrong, and
// the model is told so, with neither the endpoint nor the credentials.
func TestCredentialsInURLAreNotUnreachable(t *testing.T) {
	s3 := startS3(t)
	u := strings.Replace(s3.url("lro"), "s3://", "s3://AKIAEXAMPLE:topsecret@", 1)
	var ev events
	o := offloader(t, u, 3600, &ev, lro.WithoutJanitor())
	out := offload(t, o, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assert.Contains(t, out.Warning, "the file store is not set up correctly on this server")
	assert.Contains(t, out.Warning, "calling again will not help")
	assert.NotContains(t, out.Warning, "could not be reached")
	assert.NotContains(t, out.Warning, "again later")
	for _, secret := range []string{"AKIAEXAMPLE", "topsecret"} {
		assert.NotContains(t, out.Warning, secret)
		assert.NotContains(t, out.Err.Error(), secret, "nor in the log")
	}
	assertNoInternals(t, s3, out.Warning)
	assert.ErrorIs(t, out.Err, lro.ErrStoreMisconfigured)
	assert.ErrorContains(t, out.Err, "credentials do not belong in the URL", "the operator's log says why")
}
