package blobfs

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/smithy-go"
	"github.com/mcplro/lro"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// DefaultProbeInterval is the time between two probes of a store found
// down, unless [WithProbeInterval] says otherwise.
const DefaultProbeInterval = 5 * time.Second

// health is what an FS knows of its store's state. When a request finds
// the store down (it timed out, or the connection was refused or dropped:
// see outage), every operation fails at once, with [lro.ErrStoreDown],
// rather than each waiting its timeout, while one probe every interval
// asks the store for one name under the prefix; the first answer ends the
// outage. A store that answers with an error (access denied, a missing
// object) is up: its calls are fast already.
type health struct {
	mu       sync.Mutex
	down     error     // what found the store down; nil while it answers
	since    time.Time // when it was found down
	watchers map[int]func(available bool, cause error)
	next     int           // the key of the next watcher
	stop     chan struct{} // closed by Close: no more probes
	closed   bool
}

// check returns the error of an operation while the store is known to be
// down, nil otherwise.
func (f *FS) check(op, name string) error {
	f.health.mu.Lock()
	defer f.health.mu.Unlock()
	if f.health.down == nil {
		return nil
	}
	return &storeDown{op: op, name: name, since: f.health.since, every: f.opts.probe, cause: f.health.down}
}

// storeDown is the error of an operation not tried because the store is
// known to be down. It wraps lro.ErrStoreDown and the failure that found
// the store down, which says what kind it was (a timeout, the store
// unreachable) and, for the log, more.
type storeDown struct {
	op, name string
	since    time.Time
	every    time.Duration
	cause    error
}

func (e *storeDown) Error() string {
	return fmt.Sprintf("%s %s: %v since %s (probed every %s): %v", e.op, e.name, lro.ErrStoreDown, e.since.UTC().Format(time.RFC3339), e.every, e.cause)
}

func (e *storeDown) Unwrap() []error { return []error{lro.ErrStoreDown, e.cause} }

// observe notes the outcome of a request: an error that means the store
// is down (see outage) starts the outage. It returns err.
func (f *FS) observe(err error) error {
	if !outage(err) {
		return err
	}
	f.health.mu.Lock()
	if f.health.down != nil || f.health.closed {
		f.health.mu.Unlock()
		return err
	}
	f.health.down, f.health.since = err, time.Now()
	watchers := f.watchersLocked()
	f.health.mu.Unlock()
	go f.probe()
	for _, w := range watchers {
		w(false, err)
	}
	return err
}

// outage reports whether err, of a request to the store, means that the
// store is down: the request timed out, or got no answer (a connection
// refused, reset or closed), or the store answered 5xx. An answer of the
// store (access denied, no such object, a precondition) does not.
func outage(err error) bool {
	if err == nil {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.AlreadyExists, gcerrors.FailedPrecondition, gcerrors.PermissionDenied,
		gcerrors.InvalidArgument, gcerrors.Unimplemented, gcerrors.Canceled:
		return false
	case gcerrors.DeadlineExceeded:
		return true
	}
	var re interface{ HTTPStatusCode() int } // the AWS SDK's response errors
	if errors.As(err, &re) {
		code := re.HTTPStatusCode()
		return code == 0 || code >= 500 // 0: the request got no answer
	}
	var ae smithy.APIError
	return !errors.As(err, &ae) // an error code is the store's answer
}

// probe asks the store, every probe interval, for one name under the
// prefix, until it answers or the FS is closed; then the outage ends.
func (f *FS) probe() {
	t := time.NewTicker(f.opts.probe)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.health.stop:
			return
		}
		ctx, cancel := f.ctx()
		_, _, err := f.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: f.prefix, Delimiter: "/"})
		cancel()
		if outage(err) {
			continue
		}
		f.health.mu.Lock()
		f.health.down = nil
		watchers := f.watchersLocked()
		f.health.mu.Unlock()
		for _, w := range watchers {
			w(true, nil)
		}
		return
	}
}

func (f *FS) watchersLocked() []func(bool, error) {
	out := make([]func(bool, error), 0, len(f.health.watchers))
	for _, w := range f.health.watchers {
		out = append(out, w)
	}
	return out
}

// WatchAvailability calls fn when the FS finds the store down (available
// false, with the failure that found it) and when a probe finds it up
// again (true, nil); stop ends the calls. The engine logs and counts
// these changes (lro.store.state_changes), rather than each call that
// fails meanwhile. fn is called on the goroutine of the request or the
// probe, and must be quick.
func (f *FS) WatchAvailability(fn func(available bool, cause error)) (stop func()) {
	f.health.mu.Lock()
	defer f.health.mu.Unlock()
	if f.health.watchers == nil {
		f.health.watchers = map[int]func(bool, error){}
	}
	key := f.health.next
	f.health.next++
	f.health.watchers[key] = fn
	return func() {
		f.health.mu.Lock()
		delete(f.health.watchers, key)
		f.health.mu.Unlock()
	}
}

// stopProbes ends the probe of an outage, for Close.
func (f *FS) stopProbes() {
	f.health.mu.Lock()
	defer f.health.mu.Unlock()
	if !f.health.closed {
		f.health.closed = true
		close(f.health.stop)
	}
}
