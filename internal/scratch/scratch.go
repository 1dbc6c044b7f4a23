package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Dir makes a private directory (mode 0700) of the system's temporary
// directory for prefix (lro_extract's local copies, the spools of an
// object store), named for this process: prefix + "pid" + PID + "-lk" +
// random. Such a directory is removed when its files are done with, but
// a process that is killed leaves it (3 kills of a server left 87 MB of
// copies), so the first call for a prefix removes the directories of
// that prefix whose process is gone.
//
// Whether a process is gone is told by a lock, not by its PID: the
// process holds a lock on each directory it made (flock on the
// directory, where the system has it) until [Release], and a sweep
// removes a directory only once it can take that lock itself. A PID
// means nothing across PID namespaces (containers sharing a volume as
// TMPDIR), where another server's PID is absent or another process's,
// nor after the PID is reused: a sweep that asked kill(pid, 0) removed a
// live server's copies, and its lro_extract answered "" from then on.
func Dir(prefix string) (string, error) {
	sweepScratch(prefix)
	pattern := fmt.Sprintf("%spid%d-%s", prefix, os.Getpid(), lockedMark)
	var err error
	for range 3 {
		var dir string
		if dir, err = os.MkdirTemp("", pattern); err != nil {
			return "", err
		}
		// A sweep that took the lock first removes the directory: make
		// another.
		if err = hold(dir); err == nil {
			return dir, nil
		}
		os.Remove(dir)
	}
	return "", fmt.Errorf("cannot lock the scratch directory: %w", err)
}

// Release gives up the lock on dir, a directory Dir made, once the caller
// has removed it (or no longer minds a sweep removing it). It does
// nothing for another path.
func Release(dir string) {
	held.Lock()
	l, ok := held.m[dir]
	delete(held.m, dir)
	held.Unlock()
	if ok {
		l.unlock()
	}
}

// lockedMark follows the PID in the name of a directory whose life a lock
// tells (see Dir). Older names, "pid" + PID + "-" + digits, are of
// directories without a lock, made by an older version of this library;
// a sweep still asks whether their process runs (see processGone).
const lockedMark = "lk"

// held maps each directory Dir made, not yet released, to its lock.
var held struct {
	sync.Mutex
	m map[string]dirLock
}

// hold takes the lock of dir, made by Dir, for this process's life or
// until Release.
func hold(dir string) error {
	l, err := lockDir(dir, true)
	if err != nil {
		return err
	}
	held.Lock()
	defer held.Unlock()
	if held.m == nil {
		held.m = map[string]dirLock{}
	}
	held.m[dir] = l
	return nil
}

// swept records the temporary directories and prefixes swept by this
// process.
var swept sync.Map

// sweepScratch removes, once per process, temporary directory and
// prefix, the directories of prefix left by processes that are gone.
func sweepScratch(prefix string) {
	tmp := os.TempDir()
	if _, done := swept.LoadOrStore(tmp+"\x00"+prefix, true); done {
		return
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, locked, ok := scratchName(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if !ownedDir(dir) {
			continue
		}
		if locked {
			removeUnlocked(dir)
		} else if pid != os.Getpid() && processGone(pid) {
			os.RemoveAll(dir)
		}
	}
}

// removeUnlocked removes dir when no process holds its lock: the one that
// made it is gone. The sweep holds the lock while it removes, so that a
// process making a directory of the same name cannot take it meanwhile
// (see Dir).
func removeUnlocked(dir string) {
	l, err := lockDir(dir, false)
	if err != nil {
		return // held, or unknown: kept
	}
	defer l.unlock()
	os.RemoveAll(dir)
}

// scratchName returns the process ID in the name of a directory of
// prefix, made by Dir, and whether the directory has a lock (see
// lockedMark).
func scratchName(name, prefix string) (pid int, locked, ok bool) {
	rest, ok := strings.CutPrefix(name, prefix+"pid")
	if !ok {
		return 0, false, false
	}
	digits, tail, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, strings.HasPrefix(tail, lockedMark), err == nil && pid > 0
}
