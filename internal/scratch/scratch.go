package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Dir makes a private directory (mode 0700) of the system's
// temporary directory for prefix (lro_extract's local copies, the spools
// of an object store), named for this process: prefix + "pid" + PID + "-"
// + random. Such a directory is removed when its files are done with, but
// a process that is killed leaves it (3 kills of a server left 87 MB of
// copies), so the first call for a prefix removes the directories of
// that prefix whose process is gone (see processGone).
func Dir(prefix string) (string, error) {
	sweepScratch(prefix)
	return os.MkdirTemp("", fmt.Sprintf("%spid%d-", prefix, os.Getpid()))
}

// swept records the prefixes swept by this process.
var swept sync.Map

// sweepScratch removes, once per process and prefix, the directories of
// prefix left by processes that are gone.
func sweepScratch(prefix string) {
	if _, done := swept.LoadOrStore(prefix, true); done {
		return
	}
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := scratchPID(e.Name(), prefix)
		if !ok || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if ownedDir(dir) && processGone(pid) {
			os.RemoveAll(dir)
		}
	}
}

// scratchPID returns the process ID in the name of a directory of
// prefix, made by Dir.
func scratchPID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"pid")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}
