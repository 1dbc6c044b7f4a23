package extract

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// The worker program: a build of cmd/lro-worker, which links only the
// workers' code, rather than the server's own executable, whose every
// package's init function would run again in each worker.
const (
	// workerPathEnv names the worker program, as Limits.WorkerPath
	// does.
	workerPathEnv = "LRO_WORKER_PATH"
	// workerName is the program searched for beside the executable, then
	// on PATH.
	workerName = "lro-worker"
	// workerPkg is its package, as its build information names it.
	workerPkg  = modulePath + "/cmd/lro-worker"
	modulePath = "github.com/mcplro/lro"
)

// workerProgram returns the worker program found for this process and
// those to fall back on, in order, should it speak another protocol (see
// extractworker.Config.Fallbacks), looked for once.
func workerProgram() (string, []string) {
	c, _ := workerPrograms()
	return c[0], c[1:]
}

// workerPrograms is findWorker, once.
var workerPrograms = sync.OnceValues(findWorker)

// findWorker returns the worker programs: LRO_WORKER_PATH alone, else
// lro-worker beside this executable and on PATH when they were built
// from the version of this module that this program links (or either is
// a development build, whose protocol only its hello tells), then ""
// (this executable, run again); with a note of why for the log when
// none was found.
func findWorker() (programs []string, note string) {
	if p := os.Getenv(workerPathEnv); p != "" {
		return []string{p}, ""
	}
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), workerName))
	}
	if p, err := exec.LookPath(workerName); err == nil {
		candidates = append(candidates, p)
	}
	note = "lro: lro_extract's workers run this executable again, so every init function of its packages runs again in each worker; to run none, install " +
		workerName + " beside it or on PATH (go install " + workerPkg + "@" + installVersion() + ") or set " + workerPathEnv
	for _, c := range candidates {
		if fi, err := os.Stat(c); err != nil || fi.IsDir() || slices.Contains(programs, c) {
			continue
		}
		bi, err := readBuildInfo(c)
		if err != nil || bi.Path != workerPkg {
			note = "lro: " + c + " is not a build of " + workerPkg + "; " + note
			continue
		}
		if v := ownVersion(); bi.Main.Version != v && bi.Main.Version != "(devel)" && v != "(devel)" {
			note = "lro: " + c + " is " + workerPkg + " " + bi.Main.Version + ", not " + v + " as this program links; " + note
			continue
		}
		programs = append(programs, c)
	}
	if len(programs) > 0 {
		note = ""
	}
	return append(programs, ""), note
}

// installVersion is the version to name in a go install command: this
// module's, or "latest" for a development build, which go install cannot
// name.
func installVersion() string {
	if v := ownVersion(); v != "(devel)" {
		return v
	}
	return "latest"
}

// ownVersion returns the version of this module that the program links,
// "(devel)" when unknown or replaced.
func ownVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			if d.Replace != nil {
				return "(devel)"
			}
			return d.Version
		}
	}
	return "(devel)"
}

// noteWorker logs once in the process which program the workers run when
// it is this executable, through logger (slog.Default without one, see
// [WithLogger]).
func (o *Tool) noteWorker() {
	if o.env.Limits.WorkerPath != "" || o.env.Limits.InProcess {
		return
	}
	_, note := workerPrograms()
	if note == "" || notedWorker.Swap(true) {
		return
	}
	o.logger().Info(note, slog.String("tool", ToolName))
}

var notedWorker atomic.Bool
