package blobfs_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32.3: a warm query reads nothing of the object. Each lro_extract
// used to open the object (a GET) before it looked at its local copy, and
// closed it: MinIO pushed 131-647 KB of a 6.8 MB object into the socket
// on every warm call, and each aborted read dropped the connection. Now
// the object is read once, for the copy; a later call asks at most for
// its metadata (a HEAD), and none within a few seconds of the last.
func TestWarmQueryReadsNoObject(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no workers, no local copies")
	}
	s3 := startS3(t)
	u := s3.url("lro")
	a := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	b := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	d := offload(t, a, 300).Response
	require.NotNil(t, d)
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]

	ctx := context.Background()
	_, err := b.Extract(ctx, map[string]any{"file_path": d.FilePath, "recipe": 1})
	require.NoError(t, err)
	require.Equal(t, 1, s3.count(http.MethodGet, "/"+name), "the first query reads the object, for its copy")
	heads := s3.count(http.MethodHead, "/"+name)
	const warm = 4
	for i := range warm {
		text, err := b.Extract(ctx, map[string]any{"file_path": d.FilePath, "query": `select(.id == "m00042") | .title`})
		require.NoError(t, err, "query %d", i)
		assert.Contains(t, text, "memory number 42 about deployment")
	}
	rc, err := b.Host().ReadResource(ctx, "lro://files/"+name+"/lines/2-2")
	require.NoError(t, err)
	assert.Contains(t, rc.Text, `"id":"m00000"`)
	assert.Equal(t, 1, s3.count(http.MethodGet, "/"+name), "warm queries and reads make no GET of the object")
	assert.LessOrEqual(t, s3.count(http.MethodHead, "/"+name)-heads, warm+1, "one metadata request a call at most")
}
