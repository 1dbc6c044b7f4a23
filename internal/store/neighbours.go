package store

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Offloaders that share a directory (two servers of one user, two
// processes of one server, an old process's files and a new one) must not
// hurt each other. Two facts, readable from a directory listing without
// opening a file, make that possible:
//
//   - Who wrote a file. The first ownerTagSize bytes of the ULID's entropy
//     are a hash of the offloader's name (see [WithName]); the other six
//     are random. The name stays {prefix}-{operation}-{ULID}.jsonl with a
//     valid ULID, and an offloader reads, evicts and expires only files
//     that carry its own tag. Processes of one server share the name, so a
//     new process cleans up after an old one.
//   - When a file may go. Its modification time is set to its expiry
//     (written + TTL, rounded up to a whole second) before it is published,
//     so an offloader with a shorter TTL never deletes a neighbour's file
//     early, whatever their TTLs.

// ownerTagSize is how many bytes of a ULID's 10 bytes of entropy carry the
// owner's tag. 4 bytes make two names collide with probability 2^-32; the
// 6 random bytes left (48 bits a millisecond) keep names unique and
// unguessable.
const ownerTagSize = 4

// ownerTag identifies the offloaders of one name.
type ownerTag [ownerTagSize]byte

// tagOf returns the tag of the offloaders named name.
func tagOf(name string) ownerTag {
	sum := sha256.Sum256([]byte("lro owner\x00" + name))
	return ownerTag(sum[:ownerTagSize])
}

// DefaultName is the name of an offloader without [WithName]: the base
// name of the executable, so that two different servers are apart by
// default and every process of one server is the same offloader. (The MCP
// server's own name is not known yet when New runs: the Offloader is
// built before the server it configures.)
func DefaultName() string {
	exe, err := os.Executable()
	if err != nil || exe == "" {
		exe = os.Args[0]
	}
	name := strings.TrimSuffix(filepath.Base(exe), ".exe")
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "lro"
	}
	return name
}

// idFor returns a new ULID for t, carrying tag. Its random part comes from
// crypto/rand, which is safe for concurrent use.
func idFor(tag ownerTag, t time.Time) (ulid.ULID, error) {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		return id, err
	}
	var entropy [10]byte
	copy(entropy[:], tag[:])
	if _, err := rand.Read(entropy[ownerTagSize:]); err != nil {
		return id, err
	}
	return id, id.SetEntropy(entropy[:])
}

// IDFor returns a new ULID for t carrying the tag of the offloaders named
// name, as files written by another process of that name have.
func IDFor(name string, t time.Time) (ulid.ULID, error) { return idFor(tagOf(name), t) }

// tagOfID returns the owner tag that id carries.
func tagOfID(id ulid.ULID) ownerTag {
	// A ULID is 6 bytes of time, then 10 of entropy.
	return ownerTag(id[6 : 6+ownerTagSize])
}

// NewID returns a ULID for a file this Store writes at t.
func (s *Store) NewID(t time.Time) (ulid.ULID, error) {
	id, err := idFor(s.index().tag, t)
	if err != nil {
		return id, fmt.Errorf("lro: generating a file name: %w", err)
	}
	return id, nil
}

// Owns reports whether id names a file of this Store's name: one it
// may read, evict and expire.
func (s *Store) Owns(id ulid.ULID) bool {
	return tagOfID(id) == s.index().tag
}

// Name returns the name this Store goes by in its directory: the one
// given to [WithName], or the executable's base name.
func (s *Store) Name() string { return s.index().name }

// ExpiryStamp returns the modification time that records expiry: rounded
// up to a whole second, because some file systems keep only seconds (and
// would otherwise round a file's life down).
func ExpiryStamp(expiry time.Time) time.Time {
	if t := expiry.Truncate(time.Second); t.Before(expiry) {
		return t.Add(time.Second)
	}
	return expiry
}

// expiryOf returns when a file found in the directory may be deleted: when
// both the expiry recorded in its modification time and its creation time
// plus this Offloader's TTL have passed. The first keeps a neighbour's
// longer TTL; the second keeps a file that records no expiry (written by
// an older version, or through an FS that cannot set times), whose
// modification time is only when it was written.
func expiryOf(created, modTime time.Time, ttl time.Duration) time.Time {
	return later(modTime, created.Add(ttl))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
