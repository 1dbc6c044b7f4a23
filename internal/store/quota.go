package store

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// fileIndex is what an Offloader knows of the files of its name in its
// directory: their sizes and expiries, and the bytes promised to files
// being written. It is built by a directory scan at start (and again by
// the janitor now and then, see rescan) and kept up to date by every
// write, eviction and expiry, so that neither the quota nor the janitor
// needs to read the directory per file.
//
// The tally never counts less than the directory holds: room is taken
// before a byte is written and given back only after a file is gone.
type fileIndex struct {
	once sync.Once
	name string
	tag  ownerTag

	scanMu  sync.Mutex  // one scan at a time
	scanned atomic.Bool // a scan has read the directory

	mu        sync.Mutex
	freed     chan struct{} // closed (and replaced) whenever bytes are given back
	files     map[string]*indexEntry
	byExpiry  expiryHeap
	used      int64               // bytes of the files in files, and of those being expired
	reserved  int64               // bytes of the quota promised to files being written
	unwritten int64               // bytes the writes in progress may still put on disk
	expiring  int64               // bytes of files the janitor is deleting
	writing   map[string]uint64   // temporary names being written, by their ticket
	tickets   uint64              // tickets handed out: a lower one is an older write
	removing  map[string]struct{} // names the janitor is deleting
	gen       uint64              // scans started
	scanning  int                 // scans in progress
	gone      map[string]struct{} // names deleted while a scan was in progress
	wakeAt    time.Time           // when the janitor will look next (zero: it is looking)
	wake      chan struct{}       // tells the janitor of an earlier expiry
}

// indexEntry is one published file.
type indexEntry struct {
	name    string
	size    int64
	created time.Time
	expires time.Time
	gen     uint64 // the scan generation it was added in
	pos     int    // in byExpiry
}

// index returns the Store's fileIndex, set up on first use.
func (s *Store) index() *fileIndex {
	x := &s.files
	x.once.Do(func() {
		x.name = s.name
		x.tag = tagOf(x.name)
		x.freed = make(chan struct{})
		x.files = make(map[string]*indexEntry)
		x.writing = make(map[string]uint64)
		x.removing = make(map[string]struct{})
		x.gone = make(map[string]struct{})
		x.wake = make(chan struct{}, 1)
	})
	return x
}

// add indexes a published file. The caller holds x.mu.
func (x *fileIndex) add(e *indexEntry) {
	x.files[e.name] = e
	heap.Push(&x.byExpiry, e)
	x.used += e.size
	if !x.wakeAt.IsZero() && e.expires.Before(x.wakeAt) {
		select {
		case x.wake <- struct{}{}:
		default: // already told
		}
	}
}

// gaveBack wakes every call waiting for room. The caller holds x.mu.
func (x *fileIndex) gaveBack() {
	close(x.freed)
	x.freed = make(chan struct{})
}

// drop forgets a file that is gone. The caller holds x.mu.
func (x *fileIndex) drop(e *indexEntry) {
	heap.Remove(&x.byExpiry, e.pos)
	delete(x.files, e.name)
	x.used -= e.size
}

// deleted notes that name is gone, for a scan in progress that may have
// listed it. The caller holds x.mu.
func (x *fileIndex) deleted(name string) {
	if x.scanning > 0 {
		x.gone[name] = struct{}{}
	}
}

// diskReading is the free space of the output directory's file system,
// read once per reservation (a statfs), outside the index's lock.
type diskReading struct {
	avail, total int64
	ok           bool
}

// readDisk reads the free space, when the FS can tell.
func (s *Store) readDisk() diskReading {
	ds, ok := s.fs.(diskSpaceFS)
	if !ok {
		return diskReading{}
	}
	avail, total, err := ds.DiskSpace()
	if err != nil {
		return diskReading{} // no reading, no reserve: a real shortage still fails the write
	}
	return diskReading{avail, total, true}
}

// checkRoom refuses a file of need bytes that is over the per-file cap or
// larger than the quota itself. None of these is helped by evicting
// anything.
func (s *Store) checkRoom(need int64) error {
	if c := s.maxFile; c > 0 && need > c {
		return fmt.Errorf("%w: the file would be %d bytes and the cap is %d", ErrFileTooLarge, need, c)
	}
	if q := s.quota; q > 0 && need > q {
		return fmt.Errorf("%w: the file would be %d bytes, more than the whole quota of %d", ErrOverQuota, need, q)
	}
	return nil
}

// checkFree refuses a file of need bytes that would eat into the
// free-space reserve. The reading d may not show the bytes of the writes
// in flight yet, so all that they were promised counts as taken (a
// streamed result's spool among them while its final file is written; at
// worst their written part counts twice: the reserve errs on the side of
// space). The caller holds x.mu.
func (s *Store) checkFree(x *fileIndex, d diskReading, need int64) error {
	if !d.ok {
		return nil
	}
	r := s.reserveOf(d.total)
	if r <= 0 {
		return nil
	}
	free := d.avail - x.unwritten - need
	if free >= r {
		return nil
	}
	return fmt.Errorf("%w: a file of %d bytes would leave %d of %d bytes free (with %d bytes being written), under the reserve of %d: %w",
		ErrLowDiskSpace, need, max(free, 0), d.total, x.unwritten, r, syscall.ENOSPC)
}

// Reserve takes room for a file of need bytes, to be written as tmp and
// published as path, evicting the files of this Offloader's name that
// expire first while the quota would be passed. While the room or disk
// space it lacks is held by files being written or deleted, it waits for
// them, until ctx ends or RoomWait has passed (a stream whose source
// stopped may hold its room a long time: the caller gets its bounded
// fallback instead). On success the caller must call Commit or
// Release. The events are for the caller to emit once it holds no lock.
func (s *Store) Reserve(ctx context.Context, tmp, path string, need int64) ([]FileEvictedEvent, []FileExpiredEvent, error) {
	return s.take(ctx, tmp, "", path, need, need)
}

// Grow takes need more bytes of the quota for tmp, which extends the
// claim of of, a write in progress (tmp itself, or the spool a final file
// is written from). write is how many bytes the caller is about to write,
// for the free-space reserve: a streamed result's final file takes over
// its spool's room and grows it by the difference, but writes all its
// bytes. It waits, as Reserve does, only when of is the oldest write in
// progress (see mayWait).
func (s *Store) Grow(ctx context.Context, tmp, of, path string, need, write int64) ([]FileEvictedEvent, []FileExpiredEvent, error) {
	return s.take(ctx, tmp, of, path, need, write)
}

// take is Reserve when of is empty, and Grow when it is not.
func (s *Store) take(ctx context.Context, tmp, of, path string, need, write int64) ([]FileEvictedEvent, []FileExpiredEvent, error) {
	if err := s.checkRoom(write); err != nil {
		return nil, nil, err
	}
	quota := s.quota
	if quota > 0 {
		s.ensureScanned()
	}
	x := s.index()
	var (
		evicted []FileEvictedEvent
		expired []FileExpiredEvent
	)
	x.mu.Lock()
	defer x.mu.Unlock()
	ticket, holds := x.writing[of]
	if !holds {
		x.tickets++
		ticket = x.tickets
	}
	giveUp := time.Now().Add(RoomWait)
room:
	for {
		x.mu.Unlock()
		disk := s.readDisk() // a statfs, outside the lock
		x.mu.Lock()
		if err := s.checkFree(x, disk, write); err != nil {
			if !x.mayWait(ticket, holds) {
				return evicted, expired, err
			}
			if werr := x.waitFreed(ctx, giveUp); werr != nil {
				return evicted, expired, fmt.Errorf("%w; it waited for the writes in progress: %w", err, werr)
			}
			continue
		}
		for quota > 0 && x.used+x.reserved+need > quota {
			if x.byExpiry.Len() == 0 {
				if x.reserved == 0 && x.expiring == 0 {
					// Nothing will give room back: the tally is off (it
					// cannot be, but a wait here would be forever).
					return evicted, expired, fmt.Errorf("%w: %d bytes in use, none of them evictable", ErrOverQuota, x.used)
				}
				if !x.mayWait(ticket, holds) {
					return evicted, expired, fmt.Errorf("%w: %d bytes in use or promised, none of them evictable now", ErrOverQuota, x.used+x.reserved)
				}
				if err := x.waitFreed(ctx, giveUp); err != nil {
					return evicted, expired, fmt.Errorf("%w: %d bytes in use or promised by writes in progress; it waited for them: %w",
						ErrOverQuota, x.used+x.reserved, err)
				}
				continue room // the disk may have changed too
			}
			ev, ex, err := s.evictFirst(x, path, need, quota)
			if err != nil {
				return evicted, expired, err
			}
			if ev != nil {
				evicted = append(evicted, *ev)
			}
			if ex != nil {
				expired = append(expired, *ex)
			}
		}
		x.hold(tmp, ticket, need, write)
		return evicted, expired, nil
	}
}

// evictFirst deletes the file of x that expires first, for the write of
// need bytes that path is to be, and returns the event owed: an eviction,
// or an expiry the janitor had not done yet (neither when the file was
// gone already, and only the tally was behind). The caller holds x.mu.
func (s *Store) evictFirst(x *fileIndex, path string, need, quota int64) (*FileEvictedEvent, *FileExpiredEvent, error) {
	e := x.byExpiry[0]
	used := x.used + x.reserved
	err := s.fs.Remove(e.name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: evicting %s: %w", ErrOverQuota, e.name, err)
	}
	x.drop(e)
	x.deleted(e.name)
	if err != nil {
		return nil, nil, nil
	}
	if !time.Now().Before(e.expires) {
		ex := s.expiredEvent(e)
		return nil, &ex, nil
	}
	return &FileEvictedEvent{
		Path:    s.fs.Path(e.name),
		Bytes:   e.size,
		Created: e.created,
		Expires: e.expires,
		For:     path,
		Reason: fmt.Sprintf("max_dir_bytes is %d: %d bytes were in use and %d more were needed; evicted the file that expires first (at %s)",
			quota, used, need, e.expires.UTC().Format(time.RFC3339)),
		Used:  used,
		Need:  need,
		Quota: quota,
	}, nil, nil
}

// hold records that tmp, a write of ticket t, took need bytes of the
// quota and may put write bytes on disk. The caller holds x.mu.
func (x *fileIndex) hold(tmp string, t uint64, need, write int64) {
	x.reserved += need
	x.unwritten += write
	x.writing[tmp] = t
}

// mayWait reports whether a write of ticket t, which holds room already
// or not, may wait for others to give room or disk space back. One that
// holds nothing may: a wait ends with its call, and until then it keeps
// no one else waiting. One that holds room may only if it is the oldest
// write in progress, so that, of the writes that hold room, one at most
// ever waits and it waits for none that waits: no two wait for each
// other. Without it, concurrent streams that grew in step could each
// hold a share of a disk too small for all of them, and all fail, when
// the disk has room for some. Either waits only while someone else's
// write or deletion is in progress: else nothing would ever wake it.
// The caller holds x.mu.
func (x *fileIndex) mayWait(t uint64, holds bool) bool {
	others := false
	for _, u := range x.writing {
		if holds && u < t {
			return false
		}
		others = others || u != t
	}
	return others || x.expiring > 0
}

// RoomWait bounds how long a write waits for room or disk space that
// writes in progress hold, before it fails (and its call gets the bounded
// fallback).
var RoomWait = 2 * time.Second

// errRoomWait ends a wait for room at RoomWait.
var errRoomWait = errors.New("no room came free in time")

// waitFreed waits until bytes are given back, ctx ends or giveUp has
// passed, and returns why it stopped waiting if not for bytes. The caller
// holds x.mu, which waitFreed lets go while it waits.
func (x *fileIndex) waitFreed(ctx context.Context, giveUp time.Time) error {
	left := time.Until(giveUp)
	if left <= 0 {
		return fmt.Errorf("%w (waited %s)", errRoomWait, RoomWait)
	}
	freed := x.freed
	x.mu.Unlock()
	defer x.mu.Lock()
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-freed:
		return nil
	case <-t.C:
		return fmt.Errorf("%w (waited %s)", errRoomWait, RoomWait)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// A Claim is what a write in progress took: room of the quota, and bytes
// it may put on disk, which the free-space reserve counts until it ends.
// They differ for a streamed result's final file, which takes over its
// spool's room but writes all its bytes beside the spool.
type Claim struct {
	Room, Disk int64
}

// Commit turns the claim of tmp into the room of the published file
// final, of size bytes.
func (s *Store) Commit(tmp, final string, c Claim, size int64, created, expires time.Time) {
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.writing, tmp)
	x.reserved -= c.Room
	x.unwritten -= c.Disk
	if e, ok := x.files[final]; ok { // a scan found it first
		x.drop(e)
	}
	x.add(&indexEntry{name: final, size: size, created: created, expires: expires, gen: x.gen})
	x.gaveBack()
}

// Release gives back the claim of tmp, whose write failed or which is
// removed (a spool).
func (s *Store) Release(tmp string, c Claim) {
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.writing, tmp)
	x.reserved -= c.Room
	x.unwritten -= c.Disk
	x.gaveBack()
}

// RemoveWritten deletes the published file name, which is not to be kept
// (one of a result whose other files could not be written), and forgets it.
func (s *Store) RemoveWritten(name string) error {
	err := s.fs.Remove(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // still there: still counted
	}
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.files[name]; ok {
		x.drop(e)
	}
	x.deleted(name)
	x.gaveBack()
	return nil
}

// Usage returns the bytes of this Offloader's files and of files being
// written, as the quota counts them.
func (s *Store) Usage() int64 {
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.used + x.reserved
}

func (s *Store) expiredEvent(e *indexEntry) FileExpiredEvent {
	return FileExpiredEvent{Path: s.fs.Path(e.name), Created: e.created, TTL: e.expires.Sub(e.created), Expires: e.expires}
}

// expiryHeap orders files by expiry, then by name (creation order for
// files of one process): the janitor deletes from its head, and so does
// eviction, which for one TTL is oldest first.
type expiryHeap []*indexEntry

func (h expiryHeap) Len() int { return len(h) }
func (h expiryHeap) Less(i, j int) bool {
	if c := h[i].expires.Compare(h[j].expires); c != 0 {
		return c < 0
	}
	return h[i].name < h[j].name
}
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *expiryHeap) Push(v any) {
	e := v.(*indexEntry)
	e.pos = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.pos = -1
	return e
}
