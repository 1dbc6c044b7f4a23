package lro

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/scratch"
	"github.com/mcplro/lro/internal/store"
)

// A spool takes room from the quota ahead of what it writes, in steps
// that double with what it holds, from spoolMinStep to spoolMaxStep: it
// holds at most twice its bytes or spoolMaxStep more, so that many small
// streams at once take little of the quota, and a large one takes the
// index's lock a few times, not once a record.
const (
	spoolMinStep = 64 << 10
	spoolMaxStep = 4 << 20
)

// A spool holds the records of a streamed set (see [CollectSeq]) on disk,
// one compact JSON line each, as they come: a set larger than memory
// should hold is read once, written once here and copied once into its
// file. It is a temporary file of this Offloader, so its room counts
// against the quota and no janitor sweeps it while it is written; with an
// object store, which cannot read back a file before it is published, it
// is a private file of the system's temporary directory instead.
type spool struct {
	o       *Offloader
	fs      FS     // where it is: the Offloader's, or local scratch
	name    string // temporary name in fs
	path    string
	f       File
	w       *bufio.Writer
	n       int         // records
	bytes   int64       // of the records, without line breaks
	claim   store.Claim // what it took of the quota and the disk
	scratch string      // the private directory of a local spool, removed with it
	compact bytes.Buffer

	mu   sync.Mutex  // add, finish and discard against the idle timer
	idle *time.Timer // lapses the spool spoolIdle after its last record
	last time.Time   // when it got its last record
	gone error       // why it was discarded, if it was
}

// spoolIdle bounds how long a spool waits for its next record while it
// holds room: a stream whose source stopped would hold it, and the disk,
// for as long as the stall. Past it, the spool is discarded (its call gets
// the fallback, counting the rest of the records).
var spoolIdle = 30 * time.Second

// newSpool creates an empty spool. Its first room may wait for writes in
// progress to end, until ctx ends; it grows without waiting.
func (o *Offloader) newSpool(ctx context.Context) (*spool, error) {
	id, err := o.store.NewID(time.Now())
	if err != nil {
		return nil, err
	}
	final := store.FileName(o.cfg.FilePrefix, "spool", id)
	s := &spool{o: o, fs: o.opts.fs, name: store.TempName(final), path: o.opts.fs.Path(final)}
	if store.IsRemote(o.opts.fs) {
		dir, err := scratch.Dir("lro-spool-")
		if err != nil {
			return nil, err
		}
		s.fs, s.scratch = DirFS(dir), dir
	} else if err := s.take(ctx, spoolMinStep); err != nil {
		return nil, err
	}
	if s.f, err = s.fs.Create(s.name); err != nil {
		s.discard()
		return nil, err
	}
	s.w = bufio.NewWriterSize(s.f, 256<<10)
	s.last = time.Now()
	s.idle = time.AfterFunc(spoolIdle, s.lapse)
	return s, nil
}

// lapse discards the spool if it got no record for spoolIdle.
func (s *spool) lapse() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if left := spoolIdle - time.Since(s.last); left > 0 {
		s.idle.Reset(left) // a record came as the timer fired
		return
	}
	s.discardLocked(fmt.Errorf("the stream sent no record for %s: its spool gave its room back", spoolIdle))
}

// take grows the spool's room by need bytes. Its first room may wait for
// room until ctx ends; later room only while the spool is the oldest
// write in progress (see mayWait).
func (s *spool) take(ctx context.Context, need int64) error {
	var (
		evicted []FileEvictedEvent
		expired []FileExpiredEvent
		err     error
	)
	if s.claim.Disk == 0 {
		evicted, expired, err = s.o.store.Reserve(ctx, s.name, s.path, need)
	} else {
		evicted, expired, err = s.o.store.Grow(ctx, s.name, s.name, s.path, need, need)
	}
	ctx = context.Background() // the events are owed even to a call that ended
	for _, e := range expired {
		s.o.emitExpired(ctx, e)
	}
	for _, e := range evicted {
		s.o.emitEvicted(ctx, e)
	}
	if err == nil {
		s.claim.Room += need
		s.claim.Disk += need
	}
	return err
}

// add writes one record, which must be one valid JSON value. A wait for
// room ends with ctx.
func (s *spool) add(ctx context.Context, rec []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone != nil {
		return s.gone
	}
	s.last = time.Now()
	if jsonscan.HasNewline(rec) {
		s.compact.Reset()
		if err := json.Compact(&s.compact, rec); err != nil {
			return &RecordError{Index: s.n, Err: err}
		}
		rec = s.compact.Bytes()
	}
	size := s.bytes + int64(s.n) + int64(len(rec)) + 1
	if c := s.o.opts.dir.fileCap(); c > 0 && size > c {
		return fmt.Errorf("%w: the streamed records passed %d bytes", ErrFileTooLarge, c)
	}
	if size > s.claim.Disk && s.scratch == "" {
		step := min(max(s.claim.Disk, spoolMinStep), spoolMaxStep)
		if err := s.take(ctx, max(step, size-s.claim.Disk)); err != nil {
			return err
		}
	}
	s.w.Write(rec)
	if err := s.w.WriteByte('\n'); err != nil { // bufio.Writer keeps the first error
		return err
	}
	s.n++
	s.bytes += int64(len(rec))
	return nil
}

// finish flushes and closes the spool, and returns its records.
func (s *spool) finish() (*spoolRecords, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle.Stop()
	if s.gone != nil {
		return nil, s.gone
	}
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if err != nil {
		return nil, err
	}
	return &spoolRecords{sp: s, fs: s.fs, name: s.name, n: s.n, bytes: s.bytes}, nil
}

// discard removes the spool and gives its room back; later calls do
// nothing.
func (s *spool) discard() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discardLocked(errors.New("the spool was discarded"))
}

// discardLocked is discard, for the reason why; s.mu is held.
func (s *spool) discardLocked(why error) error {
	if s.gone != nil {
		return nil
	}
	s.gone = why
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	err := s.fs.Remove(s.name)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if s.scratch != "" {
		if c, ok := s.fs.(io.Closer); ok {
			c.Close()
		}
		rerr := os.RemoveAll(s.scratch)
		scratch.Release(s.scratch)
		return errors.Join(err, rerr)
	}
	s.o.store.Release(s.name, s.claim)
	s.claim = store.Claim{}
	return err
}

// spoolRecords are the records of a finished spool, read from its file.
type spoolRecords struct {
	sp    *spool // nil for a set counted only
	fs    FS
	name  string
	n     int
	bytes int64
}

// room is the quota's room the spool holds: the final file written from
// these records takes it over (see handOver) and grows it as the spool
// would, waiting only while it is the oldest write in progress, since
// two writes that waited while holding room could wait for each other
// forever.
func (s *spoolRecords) room() int64 {
	if s.sp == nil {
		return 0
	}
	return s.sp.claim.Room
}

// holder is the spool's temporary name, whose claim the final file extends.
func (s *spoolRecords) holder() string { return s.sp.name }

// handOver gives the spool's room to the final file just published from
// it. The spool's bytes stay on disk until it is removed, once the call is
// served: the free-space reserve counts them until then.
func (s *spoolRecords) handOver() {
	if s.sp != nil {
		s.sp.claim.Room = 0
	}
}

func (s *spoolRecords) Count() int  { return s.n }
func (s *spoolRecords) Size() int64 { return s.bytes }

func (s *spoolRecords) Each(yield func(int, *records.Record) bool) error {
	f, err := s.fs.Open(s.name)
	if err != nil {
		return fmt.Errorf("reading the streamed records: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var (
		rec  records.Record
		long []byte // a line longer than the reader's buffer
	)
	for i := range s.n {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			return fmt.Errorf("reading the streamed records: record %d: %w", i, err)
		}
		line = line[:len(line)-1]
		rec = records.Record{Line: line, Sent: line}
		if !yield(i, &rec) {
			return nil
		}
	}
	return nil
}
