package store

import (
	"container/heap"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/oklog/ulid/v2"
)

// The janitor's pace. It sleeps until the next file of its name expires,
// deletes every file then due and sleeps again, without reading the
// directory: its work is one unlink per file, whatever their number. It
// reads the directory only at start and every rescan interval, to learn of
// files that other processes of its name wrote.
const (
	// minRescan and maxRescan bound the rescan interval, which is the TTL
	// otherwise: a short TTL does not make the janitor read a large
	// directory often, and files other processes left behind are found
	// within the hour (the specification's hourly custodial task).
	minRescan = time.Minute
	maxRescan = time.Hour
	// janitorTick is the least time between two wakings: files that expire
	// within it of each other are deleted together, at most that late.
	janitorTick = 100 * time.Millisecond
	// expireBatch bounds the files taken from the index at a time, so that
	// writers never wait long for the lock.
	expireBatch = 512
	// retryRemove is when a file that could not be deleted is tried again.
	retryRemove = time.Minute
	// staleTemp is how long a temporary file must have gone unwritten
	// before it counts as a crashed writer's. A writer that is alive writes
	// the whole file in one go; one of this process is never deleted.
	staleTemp = time.Hour
)

// RunJanitor deletes files as they expire, until stop is closed.
func (s *Store) RunJanitor(stop <-chan struct{}) {
	ctx := context.Background()
	x := s.index()
	every := min(max(s.ttl, minRescan), maxRescan)
	var nextScan time.Time // zero: now
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		if !now.Before(nextScan) {
			// At start, a writer may have scanned already.
			scan := s.rescan
			if nextScan.IsZero() {
				scan = s.scanOnce
			}
			if _, err := scan(ctx, now); err != nil {
				s.logJanitor(ctx, err)
			}
			nextScan = now.Add(every)
		}
		if _, err := s.expireDue(ctx, now); err != nil {
			s.logJanitor(ctx, err)
		}
		x.mu.Lock()
		wait := nextScan.Sub(now)
		if x.byExpiry.Len() > 0 {
			wait = min(wait, max(x.byExpiry[0].expires.Sub(now), janitorTick))
		}
		x.wakeAt = now.Add(wait)
		x.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-stop:
			return
		case <-timer.C:
		case <-x.wake:
			// A file expires before wakeAt: look again (not sooner than a
			// tick after the last look, which the wait computed next
			// enforces).
		}
		x.mu.Lock()
		x.wakeAt = time.Time{}
		x.mu.Unlock()
	}
}

func (s *Store) logJanitor(ctx context.Context, err error) {
	if l := s.obs.Logger; l != nil {
		l.LogAttrs(ctx, slog.LevelWarn, "lro: janitor", slog.Any("error", err))
	}
}

// ensureScanned reads the directory once, if no scan has yet, so that the
// quota counts the files earlier processes left. A writer does not list an
// object store: a store that hangs would hold the tool call for the
// listing's timeout before the upload's; the janitor's first scan counts
// the store's files instead.
func (s *Store) ensureScanned() {
	if IsRemote(s.fs) {
		return
	}
	if !s.index().scanned.Load() {
		_, _ = s.scanOnce(context.Background(), time.Now())
	}
}

// scanOnce is rescan, unless a scan has read the directory already.
func (s *Store) scanOnce(ctx context.Context, now time.Time) (int, error) {
	x := s.index()
	x.scanMu.Lock()
	defer x.scanMu.Unlock()
	if x.scanned.Load() {
		return 0, nil
	}
	return s.rescanLocked(ctx, now)
}

// rescan reads the directory and brings the index in line with it: files
// of this Offloader's name it did not know of (other processes wrote them)
// are added with the expiry recorded in them, files it knew of that are
// gone are forgotten, and temporary files of its name that no writer has
// touched for staleTemp are deleted. It returns how many it deleted.
func (s *Store) rescan(ctx context.Context, now time.Time) (int, error) {
	x := s.index()
	x.scanMu.Lock()
	defer x.scanMu.Unlock()
	return s.rescanLocked(ctx, now)
}

func (s *Store) rescanLocked(ctx context.Context, now time.Time) (deleted int, err error) {
	x := s.index()
	x.mu.Lock()
	x.gen++
	gen := x.gen
	x.scanning++
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		if x.scanning--; x.scanning == 0 {
			clear(x.gone)
		}
		x.mu.Unlock()
	}()

	entries, err := s.fs.ReadDir()
	if err != nil {
		s.CountError(ctx, "janitor", err)
		return 0, err
	}
	ttl := s.ttl
	found := make([]indexEntry, 0, len(entries))
	for _, de := range entries {
		if !de.Type().IsRegular() {
			continue
		}
		name := de.Name()
		_, id, temp, ok := ParseFileName(s.prefix, name)
		if !ok || tagOfID(id) != x.tag {
			continue // not a file of this prefix and name
		}
		info, ierr := de.Info()
		if ierr != nil {
			continue // deleted since the listing
		}
		created := ulid.Time(id.Time())
		if temp {
			if s.sweepTemp(ctx, name, created, info.ModTime(), now) {
				deleted++
			}
			continue
		}
		found = append(found, indexEntry{name: name, size: info.Size(), created: created, expires: expiryOf(created, info.ModTime(), ttl)})
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	seen := make(map[string]struct{}, len(found))
	for i := range found {
		e := &found[i]
		seen[e.name] = struct{}{}
		if _, known := x.files[e.name]; known {
			continue // what this process recorded is authoritative
		}
		if _, ok := x.removing[e.name]; ok {
			continue
		}
		if _, ok := x.gone[e.name]; ok {
			continue // deleted after the listing
		}
		e.gen = gen
		x.add(e)
	}
	for name, e := range x.files {
		// A file indexed before this scan began existed when the directory
		// was listed, unless it was deleted behind our back.
		if _, ok := seen[name]; !ok && e.gen < gen {
			x.drop(e)
		}
	}
	x.scanned.Store(true)
	x.gaveBack()
	return deleted, nil
}

// Sweep does at once what the janitor does in the background: it reads
// the directory again and deletes the files whose TTL has passed. It
// returns how many files it deleted (see lro's Offloader.Sweep).
func (s *Store) Sweep(ctx context.Context) (int, error) {
	now := time.Now()
	n, err := s.rescan(ctx, now)
	m, xerr := s.expireDue(ctx, now)
	return n + m, errors.Join(err, xerr)
}

// sweepTemp deletes the temporary file name if it is stale: not being
// written by this process, and untouched for staleTemp (its modification
// time is the last write, or the expiry once stamped). It reports whether
// it deleted it.
func (s *Store) sweepTemp(ctx context.Context, name string, created, modTime, now time.Time) bool {
	x := s.index()
	x.mu.Lock()
	_, writing := x.writing[name]
	x.mu.Unlock()
	if writing || now.Sub(modTime) < staleTemp {
		return false
	}
	if s.fs.Remove(name) != nil {
		return false // gone already, or stuck: the next scan tries again
	}
	expires := modTime.Add(staleTemp)
	s.obs.expired(ctx, FileExpiredEvent{Path: s.fs.Path(name), Created: created, TTL: expires.Sub(created), Expires: expires})
	return true
}

// expireDue deletes the indexed files whose expiry is not after now. It
// returns how many it deleted.
func (s *Store) expireDue(ctx context.Context, now time.Time) (deleted int, err error) {
	x := s.index()
	batch := make([]*indexEntry, 0, expireBatch)
	for {
		batch = batch[:0]
		x.mu.Lock()
		for x.byExpiry.Len() > 0 && len(batch) < expireBatch && !x.byExpiry[0].expires.After(now) {
			e := heap.Pop(&x.byExpiry).(*indexEntry)
			delete(x.files, e.name)
			x.removing[e.name] = struct{}{}
			x.expiring += e.size
			batch = append(batch, e)
		}
		x.mu.Unlock()
		if len(batch) == 0 {
			return deleted, err
		}

		// Delete without the lock; the bytes stay counted until the files
		// are gone.
		stuck := make([]bool, len(batch))
		for i, e := range batch {
			rerr := s.fs.Remove(e.name)
			switch {
			case rerr == nil:
				deleted++
				s.obs.expired(ctx, s.expiredEvent(e))
			case errors.Is(rerr, fs.ErrNotExist):
				// Deleted already (by another process of this name).
			default:
				s.CountError(ctx, "janitor", rerr)
				err = rerr // keep going: one stuck file must not keep the rest
				stuck[i] = true
			}
		}

		x.mu.Lock()
		for i, e := range batch {
			x.expiring -= e.size
			x.used -= e.size
			delete(x.removing, e.name)
			if stuck[i] {
				e.expires = now.Add(retryRemove)
				x.add(e) // counted again, tried again later
				continue
			}
			x.deleted(e.name)
		}
		x.gaveBack()
		x.mu.Unlock()
	}
}
