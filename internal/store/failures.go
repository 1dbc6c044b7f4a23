package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Error is a failure of an object store (an FS that is Remote) to
// answer a read. Its Error is a sentence for the model, which names no
// endpoint, query parameter or credential of the store; Unwrap returns
// the store's own error, which goes to the log (see storeFailed).
type Error struct{ Err error }

func (e *Error) Error() string {
	if lasting(e.Err) {
		return Trouble(e.Err) + "; calling again will not help until the server's operator fixes that"
	}
	return Trouble(e.Err) + "; try again later"
}

func (e *Error) Unwrap() error { return e.Err }

// lasting reports whether err is a failure of a store that calling again
// does not cure: it refused access (a wrong key, a policy), or it is set
// up wrong. Then the model is not told to try again later.
func lasting(err error) bool {
	kind := ErrorKind(err)
	return kind == "permission" || kind == "config"
}

// Trouble says what went wrong with a store, in words for the model:
// never the store's own error, which may name an internal host or a
// signed URL.
func Trouble(err error) string {
	switch ErrorKind(err) {
	case "timeout":
		return "the file store did not answer in time"
	case "permission":
		return "the file store refused access"
	case "too_large":
		return "the result is larger than one offloaded file may be"
	case "quota":
		return "the offloaded files' quota is used up"
	case "config":
		return "the file store is not set up correctly on this server"
	}
	return "the file store could not be reached"
}

// ErrorKind classifies a store's error: timeout, permission, config (a
// store that could not be opened, or is set up wrong), unavailable, or
// too_large and quota for the engine's own refusals.
func ErrorKind(err error) string {
	switch {
	case errors.Is(err, ErrStoreMisconfigured):
		return "config"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, fs.ErrPermission):
		return "permission"
	case errors.Is(err, ErrFileTooLarge):
		return "too_large"
	case errors.Is(err, ErrOverQuota):
		return "quota"
	}
	return "unavailable"
}

// FallbackWarning is the warning of a result truncated because its file
// could not be written for err. A directory's error is told as it is (it
// names this machine's path and what to fix); a store's is told in plain
// words, since its error may name internal hosts: the whole of it goes to
// the log and the WriteFailedEvent.
func FallbackWarning(fsys FS, err error, kept, count int) string {
	if !IsRemote(fsys) {
		return fmt.Sprintf("lro: offloading failed (%v); the result is truncated to %d of %d records", err, kept, count)
	}
	again := "call the tool again later for the whole result"
	switch kind := ErrorKind(err); {
	case lasting(err):
		again = "calling again will not help; narrow the call to get the rest"
	case kind == "too_large", kind == "quota":
		again = "narrow the call to get the rest"
	}
	return fmt.Sprintf("lro: offloading failed (%s); the result is truncated to %d of %d records; %s", Trouble(err), kept, count, again)
}

// storeLogEvery is the least time between two log lines of store
// failures of reads and listings: an outage logs once per burst, with
// the number of failures not logged since the last line.
const storeLogEvery = time.Minute

// storeLog spaces out the log lines of store failures.
type storeLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int
}

// Failed counts and logs err when it is a failure of the store
// (an *Error in its chain), for what (lro_extract, resources/read,
// janitor). The first failure of a burst is logged, with the store's own
// error; the next ones within storeLogEvery are only counted. A call not
// tried because the store is known to be down (ErrStoreDown) is neither:
// the outage was, once. It reports whether err was the store's.
func (s *Store) Failed(ctx context.Context, what string, err error) bool {
	var se *Error
	if !errors.As(err, &se) {
		return false
	}
	if errors.Is(se.Err, ErrStoreDown) {
		return true
	}
	s.CountError(ctx, what, se.Err)
	l := s.obs.Logger
	if l == nil {
		return true
	}
	s.storeLog.mu.Lock()
	now := time.Now()
	if !s.storeLog.last.IsZero() && now.Sub(s.storeLog.last) < storeLogEvery {
		s.storeLog.missed++
		s.storeLog.mu.Unlock()
		return true
	}
	missed := s.storeLog.missed
	s.storeLog.last, s.storeLog.missed = now, 0
	s.storeLog.mu.Unlock()
	l.LogAttrs(ctx, slog.LevelWarn, "lro: the file store failed",
		slog.String("during", what), slog.String("kind", ErrorKind(se.Err)),
		slog.Any("error", se.Err), slog.Int("not_logged_since_last", missed))
	return true
}

// CountError counts err, met during what, in lro.store.errors when the
// FS is an object store and err is not a file that is simply gone, nor a
// call not tried while the store is known to be down (the outage is
// counted once, as a state change).
func (s *Store) CountError(ctx context.Context, what string, err error) {
	if err == nil || !IsRemote(s.fs) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrStoreDown) {
		return
	}
	kind := ErrorKind(err)
	if kind == "too_large" || kind == "quota" {
		return // the engine's refusal, not the store's failure
	}
	if f := s.obs.StoreError; f != nil {
		f(ctx, what, kind)
	}
}
