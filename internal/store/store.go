package store

import (
	"fmt"
	"time"
)

// A Store is the files of one offloader's name in its FS: it names them,
// counts them against the quota, and expires them. It is safe for
// concurrent use.
type Store struct {
	fs      FS
	name    string
	prefix  string
	ttl     time.Duration
	quota   int64 // max_dir_bytes; 0 is none
	maxFile int64 // the per-file cap; 0 is none
	minFree int64 // the free-space reserve; -1: a share of the file system
	obs     Observer

	files    fileIndex    // its files in the directory, the quota's tally: quota.go
	storeLog storeLog     // spaces out the log lines of a store's failures
	avail    availability // the outages of a store: availability.go
}

// Config is what a Store is made of; New takes it as given (the owner
// resolves defaults).
type Config struct {
	FS     FS
	Name   string        // the offloader's name (see lro.WithName)
	Prefix string        // file names start with Prefix + "-"
	TTL    time.Duration // how long a file lives
	// MaxDirBytes is the quota of this name's files; 0 is none.
	MaxDirBytes int64
	// MaxFileBytes is the per-file cap; 0 is none.
	MaxFileBytes int64
	// MinFreeBytes is the free space to keep on the file system; 0 is
	// none, -1 a share of it (5%, at most 1 GiB).
	MinFreeBytes int64
	Observer     Observer
}

// New returns the Store of c.
func New(c Config) *Store {
	s := &Store{
		fs: c.FS, name: c.Name, prefix: c.Prefix, ttl: c.TTL,
		quota: c.MaxDirBytes, maxFile: c.MaxFileBytes, minFree: c.MinFreeBytes,
		obs: c.Observer,
	}
	s.watchAvailability()
	return s
}

// FS returns the directory the files are in.
func (s *Store) FS() FS { return s.fs }

// Path returns the path of the file name, the one handed to the model.
func (s *Store) Path(name string) string { return s.fs.Path(name) }

// Remote reports whether the files are where a shell cannot reach them.
func (s *Store) Remote() bool { return IsRemote(s.fs) }

// The default free-space reserve (see lro.WithMinFreeBytes) is
// defaultMinFreePercent of the file system, at most defaultMinFreeMax: in
// the manner of journald's SystemKeepFree, a share of a small file system
// (a 512 MiB tmpfs keeps 25 MiB) and a fixed amount of a large one.
const (
	defaultMinFreePercent = 5
	defaultMinFreeMax     = 1 << 30
)

// reserveOf returns the bytes to keep free on a file system of total bytes.
func (s *Store) reserveOf(total int64) int64 {
	if s.minFree < 0 {
		return min(total/100*defaultMinFreePercent, defaultMinFreeMax)
	}
	return s.minFree
}

// StampExpiry records expires as the modification time of name, when the
// FS can set times, so that every offloader sharing the directory knows
// when the file may go (see neighbours.go).
func (s *Store) StampExpiry(name string, created, expires time.Time) error {
	c, ok := s.fs.(chtimesFS)
	if !ok {
		return nil
	}
	if err := c.Chtimes(name, created, expires); err != nil {
		return fmt.Errorf("lro: recording the file's expiry: %w", err)
	}
	return nil
}

// Reserved returns the bytes promised to files being written, which
// every write gives back when it ends.
func (s *Store) Reserved() int64 {
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.reserved
}
