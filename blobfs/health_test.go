package blobfs_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32.3: a store known to be down costs nothing. With MinIO stopped,
// each offload, lro_extract and resources/read waited its whole timeout
// (10.0-10.5 s) before the fallback, call after call. Now the first call
// that times out finds the store down; the next ones do not reach it at
// all (they fall back at once, with the same plain words), and the
// outage is logged and counted once, not each call. Failed offloads are
// in the duration histogram, with the outcome fallback.
func TestDownStoreCostsNothing(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("lro") + "&timeout=300ms&probe_interval=1h" // no probe during the test
	a := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	mp, reader := meter(t)
	var logs bytes.Buffer
	var ev events
	b := offloader(t, u, 3600, &ev, lro.WithoutJanitor(), mp, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	d := offload(t, a, 300).Response
	require.NotNil(t, d)
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]
	ctx := context.Background()

	s3.hang.Store(true)
	out := offload(t, b, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assert.ErrorIs(t, out.Err, os.ErrDeadlineExceeded, "the first call waits its timeout: %v", out.Err)
	reached := s3.count("", "")

	const calls = 3
	for range calls {
		out := offload(t, b, 300)
		require.Equal(t, lro.Truncated, out.Action)
		assert.ErrorIs(t, out.Err, lro.ErrStoreDown, "%v", out.Err)
		assert.Contains(t, out.Warning, "the file store did not answer in time")
		assert.Contains(t, out.Warning, "call the tool again later")
		assertNoInternals(t, s3, out.Warning)

		_, err := b.Extract(ctx, map[string]any{"file_path": d.FilePath, "recipe": 1})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the file store did not answer in time; try again later")
		assertNoInternals(t, s3, err.Error())

		_, err = b.Host().ReadResource(ctx, "lro://files/"+name)
		require.Error(t, err)
		assert.NotErrorIs(t, err, lro.ErrResourceNotFound)
		assertNoInternals(t, s3, err.Error())
	}
	_, err := b.Sweep(ctx)
	assert.ErrorIs(t, err, lro.ErrStoreDown)
	assert.Equal(t, reached, s3.count("", ""), "no call after the first reached the store")

	c := counts(t, reader)
	assert.EqualValues(t, 1, c["lro.store.state_changes down"], "%v", c)
	assert.EqualValues(t, 1, c["lro.store.errors offload timeout"], "only the call that found it down: %v", c)
	assert.EqualValues(t, 1+calls, c["lro.fallbacks recall"], "%v", c)
	assert.EqualValues(t, 1+calls, c["lro.offload.duration recall fallback count"], "every failed offload is timed: %v", c)
	assert.EqualValues(t, calls, c["lro.extract.calls store_error"], "%v", c)
	assert.Equal(t, 1, strings.Count(logs.String(), "the file store is down"), "%s", logs.String())
	assert.Equal(t, 1, strings.Count(logs.String(), "offload write failed"), "the fallbacks of a known outage log at debug level:\n%s", logs.String())
	_, failed, _ := ev.counts()
	assert.Equal(t, 1+calls, failed, "each fallback is still an event")
}

// Issue 32.3: after the store returns (here: it closed every connection,
// as a stopped or unreachable store does), a probe finds it up, and
// offloads reach it again, within 30 s; the return is logged and counted
// once.
func TestStoreBackIsReachedAgain(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("lro") + "&probe_interval=100ms" + tryOnce()
	mp, reader := meter(t)
	var logs bytes.Buffer
	o := offloader(t, u, 3600, nil, lro.WithoutJanitor(), mp, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

	s3.down.Store(true)
	require.Equal(t, lro.Truncated, offload(t, o, 300).Action)
	out := offload(t, o, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assert.ErrorIs(t, out.Err, lro.ErrStoreDown)
	assert.Contains(t, out.Warning, "the file store could not be reached")

	s3.down.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for out.Action != lro.Offloaded && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		out = offload(t, o, 300)
	}
	require.Equal(t, lro.Offloaded, out.Action, "offloads reach the store again within 30 s: %v", out.Err)
	c := counts(t, reader)
	assert.EqualValues(t, 1, c["lro.store.state_changes down"], "%v", c)
	assert.EqualValues(t, 1, c["lro.store.state_changes up"], "%v", c)
	assert.Equal(t, 1, strings.Count(logs.String(), "the file store answers again"), "%s", logs.String())
}

// An FS's own view: while the store is down every operation fails at
// once with lro.ErrStoreDown, wrapping the failure's kind; a store that
// answers with an error (access denied) is not down.
func TestFSFailsFastWhileDown(t *testing.T) {
	s3 := startS3(t)
	f, err := blobfs.Open(context.Background(), s3.url("lro")+"&probe_interval=1h"+tryOnce())
	require.NoError(t, err)
	defer f.Close()
	var changes []bool
	stop := f.WatchAvailability(func(up bool, cause error) {
		changes = append(changes, up)
		assert.Equal(t, up, cause == nil)
	})
	defer stop()

	s3.deny.Store(true)
	_, err = f.ReadDir()
	assert.ErrorIs(t, err, fs.ErrPermission)
	_, err = f.ReadDir()
	assert.ErrorIs(t, err, fs.ErrPermission, "a store that answers is not down")
	assert.Empty(t, changes)

	s3.deny.Store(false)
	s3.down.Store(true)
	_, err = f.Stat("a.jsonl")
	require.Error(t, err)
	assert.NotErrorIs(t, err, lro.ErrStoreDown, "the request that found it down")
	reached := s3.count("", "")
	_, err = f.Create(".b.tmp")
	assert.ErrorIs(t, err, lro.ErrStoreDown)
	for _, op := range []func() error{
		func() error { _, err := f.Open("a.jsonl"); return err },
		func() error { _, err := f.Stat("a.jsonl"); return err },
		func() error { _, err := f.ReadDir(); return err },
		func() error { return f.Remove("a.jsonl") },
	} {
		assert.ErrorIs(t, op(), lro.ErrStoreDown)
	}
	assert.Equal(t, reached, s3.count("", ""))
	assert.Equal(t, []bool{false}, changes)
}
