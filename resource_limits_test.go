package lro

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadResourceFileLimit: issue 22. A sparse file of 50 GB under a valid
// name was still being read after 60 s. Every read, whole or by lines,
// respects ExtractLimits.MaxFileBytes, checked on the size before a byte is
// read.
func TestReadResourceFileLimit(t *testing.T) {
	o := resourceOffloader(t)
	name := store.FileName(o.cfg.FilePrefix, "big", ourID(o, time.Now()))
	f, err := os.OpenFile(o.opts.fs.Path(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	if err := f.Truncate(50 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse files here: %v", err)
	}
	require.NoError(t, f.Close())
	// The caller's own deadline only keeps a failing test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, uri := range []string{resourceRoot + name, resourceRoot + name + "/lines/1", resourceRoot + name + "/lines/2-"} {
		_, err := o.Host().ReadResource(ctx, uri)
		require.ErrorIs(t, err, ErrResourceTooLarge, uri)
		assert.ErrorContains(t, err, "is 53687091200 bytes, more than the 268435456 bytes this server reads of a file")
	}
}

// TestReadResourceAdmission: issue 22. Reads had no admission: 1,600
// concurrent HTTP reads took 1,055 MiB and 76 s. They share lro_extract's
// admission: when its calls, or its bytes, are spent, a read is refused
// (after a second in line), told when to retry.
func TestReadResourceAdmission(t *testing.T) {
	o := resourceOffloader(t, WithExtractLimits(ExtractLimits{MaxCalls: 2, MaxCallBytes: 4 << 20}))
	path, data := offloadTickets(t, o, 50)
	uri := uriOf(path)

	other := admit.WithSession(context.Background(), "other")
	a, err := extractCalls.enter(other, 2, time.Minute)
	require.NoError(t, err)
	b, err := extractCalls.enter(other, 2, time.Minute)
	require.NoError(t, err)
	_, err = o.Host().ReadResource(context.Background(), uri)
	require.ErrorIs(t, err, ErrResourceBusy)
	assert.Regexp(t, `busy: no place of 2 lro_extract calls and resource reads came free within 1s \(2 running, 0 waiting\); retry in \d+ s$`, err.Error())
	b.Leave()

	// One call slot is free, but the running call holds the bytes.
	require.NoError(t, a.Reserve(4<<20, 4<<20))
	_, err = o.Host().ReadResource(context.Background(), uri+"/lines/1-5")
	require.ErrorIs(t, err, ErrResourceBusy)
	assert.ErrorContains(t, err, "hold 4 MiB")
	a.Leave()

	c, err := o.Host().ReadResource(context.Background(), uri)
	require.NoError(t, err)
	assert.Equal(t, string(data), c.Text)
	calls, bytes := extract.Held()
	assert.Zero(t, calls, "the read left the admission")
	assert.Zero(t, bytes, "and released its bytes")
}

// slowFS is a MemFS whose files are read a little at a time, slowly.
type slowFS struct{ *lrotest.MemFS }

type slowFile struct{ fs.File }

func (s slowFS) Open(name string) (fs.File, error) {
	f, err := s.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	return slowFile{f}, nil
}

func (f slowFile) Read(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return f.File.Read(p[:min(len(p), 16<<10)])
}

// TestReadResourceDeadline: a read ends by lro_extract's Timeout, whole or
// by lines, however slow the store.
func TestReadResourceDeadline(t *testing.T) {
	m := lrotest.NewMemFS("/mem")
	o := resourceOffloader(t, WithFS(slowFS{m}), WithResourceMaxBytes(4<<20), WithExtractLimits(ExtractLimits{Timeout: 200 * time.Millisecond}))
	name := store.FileName(o.cfg.FilePrefix, "slow", ourID(o, time.Now()))
	m.WriteFile(name, []byte(strings.Repeat(`{"id":1,"title":"a record of about sixty bytes, to be read"}`+"\n", 16<<10))) // 1 MB: 64 slow reads
	for _, uri := range []string{resourceRoot + name, resourceRoot + name + "/lines/10000-"} {
		start := time.Now()
		_, err := o.Host().ReadResource(context.Background(), uri)
		require.Error(t, err, uri)
		assert.Contains(t, err.Error(), "took longer than 200ms and was stopped", uri)
		testenv.Within(t, time.Since(start), 2*time.Second, uri)
	}
}

// TestReadResourceRefusesHardLink: issue 22. resources/read served a hard
// link to a file outside the directory, which lro_extract refuses: both
// open files the same way now.
func TestReadResourceRefusesHardLink(t *testing.T) {
	o := resourceOffloader(t)
	dir := filepath.Dir(o.opts.fs.Path("x"))
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("the secret\n"), 0o600))
	name := store.FileName(o.cfg.FilePrefix, "link", ourID(o, time.Now()))
	if err := os.Link(secret, filepath.Join(dir, name)); err != nil {
		t.Skipf("no hard links from the temporary directory: %v", err)
	}
	for _, uri := range []string{resourceRoot + name, resourceRoot + name + "/lines/1"} {
		c, err := o.Host().ReadResource(context.Background(), uri)
		require.Error(t, err, uri)
		assert.NotContains(t, c.Text, "secret")
		assert.ErrorContains(t, err, "has 2 links; an offloaded file has one")
		assert.False(t, errors.Is(err, ErrResourceNotFound))
	}
}
