package lro_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder collects events.
type recorder struct {
	mu        sync.Mutex
	offloaded []lro.OffloadEvent
	failed    []lro.WriteFailedEvent
	expired   []lro.FileExpiredEvent
}

func (r *recorder) Expired() []lro.FileExpiredEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lro.FileExpiredEvent(nil), r.expired...)
}

func (r *recorder) Failed() []lro.WriteFailedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lro.WriteFailedEvent(nil), r.failed...)
}

func (r *recorder) Offloaded() []lro.OffloadEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lro.OffloadEvent(nil), r.offloaded...)
}

func (r *recorder) hooks() lro.Hooks {
	return lro.Hooks{
		OnOffload: func(e lro.OffloadEvent) { r.mu.Lock(); r.offloaded = append(r.offloaded, e); r.mu.Unlock() },
		OnWriteFailed: func(e lro.WriteFailedEvent) {
			r.mu.Lock()
			r.failed = append(r.failed, e)
			r.mu.Unlock()
		},
		OnFileExpired: func(e lro.FileExpiredEvent) { r.mu.Lock(); r.expired = append(r.expired, e); r.mu.Unlock() },
	}
}

// checkTruncated asserts the specification's fallback: whole records that
// fit the threshold, a warning naming the cause, an event, no file.
func checkTruncated(t *testing.T, o *lro.Offloader, out lro.Outcome, recs []json.RawMessage, rec *recorder, cause string) {
	t.Helper()
	require.Equal(t, lro.Truncated, out.Action)
	require.Greater(t, out.Kept, 0)
	require.Less(t, out.Kept, len(recs))
	kept := 0 // each record and the comma after it
	for _, r := range recs[:out.Kept] {
		kept += o.EstimateTokens(r) + 1
	}
	assert.LessOrEqual(t, kept, o.Config().ThresholdTokens, "the kept records fit the threshold")
	assert.Greater(t, kept+o.EstimateTokens(recs[out.Kept])+1, o.Config().ThresholdTokens, "and one more would not")
	assert.Contains(t, out.Warning, "offloading failed")
	assert.Contains(t, out.Warning, cause)
	assert.Contains(t, out.Err.Error(), cause)
	require.Len(t, rec.Failed(), 1)
	e := rec.Failed()[0]
	assert.Equal(t, len(recs), e.Count)
	assert.Equal(t, out.Kept, e.Kept)
	assert.ErrorIs(t, e.Err, out.Err)
	assert.Empty(t, rec.Offloaded())
}

func TestFallbackOnInjectedFaults(t *testing.T) {
	recs := memories(t, 10000, lro.DetailFull) // ~6.7 MB: many buffer flushes
	for name, fault := range map[string]func(*lrotest.MemFS){
		"create denied":        func(m *lrotest.MemFS) { m.FailCreate(syscall.EACCES) },
		"disk full at once":    func(m *lrotest.MemFS) { m.FailWrite(1, syscall.ENOSPC) },
		"disk full mid-file":   func(m *lrotest.MemFS) { m.FailWrite(7, syscall.ENOSPC) },
		"rename fails":         func(m *lrotest.MemFS) { m.FailRename(syscall.EXDEV) },
		"disk full last flush": func(m *lrotest.MemFS) { m.FailWrite(26, syscall.ENOSPC) },
	} {
		t.Run(name, func(t *testing.T) {
			mem := lrotest.NewMemFS("/lro")
			fault(mem)
			var rec recorder
			var logs bytes.Buffer
			o := newOffloader(t, nil, lro.WithFS(mem), lro.WithHooks(rec.hooks()),
				lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
			require.NoError(t, err, "a failed write never fails the operation")
			cause := map[string]string{
				"create denied": "permission denied", "rename fails": "cross-device",
			}[name]
			if cause == "" {
				cause = "no space left on device"
			}
			checkTruncated(t, o, out, recs, &rec, cause)
			assert.Empty(t, mem.Names(), "no partial file is left behind")
			assert.Contains(t, logs.String(), "level=WARN")
			assert.Contains(t, logs.String(), "offload write failed")
		})
	}
}

func TestFallbackWhenDirectoryCannotBeCreated(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	var rec recorder
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = filepath.Join(blocker, "sub") }, lro.WithHooks(rec.hooks()))
	recs := memories(t, 300, lro.DetailMedium)
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: lro.DetailMedium, Records: recs})
	require.NoError(t, err)
	checkTruncated(t, o, out, recs, &rec, "not a directory")
}

// TestFallbackOnRealDiskFull writes into a 1 MiB tmpfs mounted in a private
// mount namespace, where the kernel itself says ENOSPC. It needs the right
// to make mount namespaces (root, or user namespaces); elsewhere it skips.
func TestFallbackOnRealDiskFull(t *testing.T) {
	if dir := os.Getenv("LRO_TMPFS_DIR"); dir != "" {
		diskFullChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process in a mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare command")
	}
	dir := t.TempDir()
	script := `mount -t tmpfs -o size=1m,mode=0700 lro-test "$LRO_TMPFS_DIR" || exit 99; exec "$0" -test.run='^TestFallbackOnRealDiskFull$' -test.v`
	args := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = append(args, "--map-root-user")
	}
	cmd := exec.Command(unshare, append(args, "sh", "-c", script, os.Args[0])...)
	cmd.Env = append(os.Environ(), "LRO_TMPFS_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && (ee.ExitCode() == 99 || bytes.Contains(out, []byte("unshare failed"))) {
		t.Skipf("cannot mount a tmpfs here: %s", out)
	}
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestFallbackOnRealDiskFull")
	t.Logf("child:\n%s", out)
}

func diskFullChild(t *testing.T, dir string) {
	var rec recorder
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithHooks(rec.hooks()))
	recs := memories(t, 5000, lro.DetailFull) // ~3.4 MB into 1 MiB
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
	require.NoError(t, err)
	checkTruncated(t, o, out, recs, &rec, "no space left on device")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the partial file is removed")

	// The space is back: the next offload that fits succeeds.
	out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 300, lro.DetailLight)})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action, out.Warning)
}
