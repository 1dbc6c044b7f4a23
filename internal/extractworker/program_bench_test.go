//go:build unix

package extractworker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// programs are the worker programs the benchmarks compare: a host program
// that links all of lro (testdata/inithost, run again as its own worker)
// and cmd/lro-worker, built once.
var programs = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "lro-worker-bench-")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, pkg := range map[string]string{"host": "github.com/mcplro/lro/testdata/inithost", "lro-worker": "github.com/mcplro/lro/cmd/lro-worker"} {
		exe := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", exe, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, &exec.ExitError{Stderr: b}
		}
		out[name] = exe
	}
	return out, nil
})

func benchPrograms(b *testing.B) map[string]string {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go command to build the programs")
	}
	progs, err := programs()
	if err != nil {
		b.Fatal(err)
	}
	return progs
}

// BenchmarkWorkerStart measures a worker's start, to its hello, for the
// host program run again and for lro-worker; "floor" starts /bin/true,
// the cost of any process.
func BenchmarkWorkerStart(b *testing.B) {
	progs := benchPrograms(b)
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{"host", "lro-worker"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w, err := startProc(progs[name], workerConfig{MemoryBytes: 160 << 20, CacheBytes: 32 << 20})
				if err != nil {
					b.Fatal(err)
				}
				w.close()
				<-w.exited
			}
			if fi, err := os.Stat(progs[name]); err == nil {
				b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-binary")
			}
		})
	}
}

// BenchmarkWorkerQuery measures a query of 500 records, cached in the
// worker, through a pool of either program.
func BenchmarkWorkerQuery(b *testing.B) {
	progs := benchPrograms(b)
	path, id := jsonlFile(b, 500)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for i, name := range []string{"host", "lro-worker"} {
		b.Run(name, func(b *testing.B) {
			p := PoolFor(Config{Workers: 1, MaxWorkers: 1, CacheBytes: 1<<20 + int64(i), Executable: progs[name]})
			req := request(path, id, `select(.id == 250) | .title`, 5*time.Second)
			run := func() {
				resp, err := p.Run(context.Background(), req, 5*time.Second, 1<<20)
				if err != nil || resp.Failure != nil || len(resp.Values) != 1 {
					b.Fatal(err, resp)
				}
			}
			run() // the worker started, the file decoded
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
			b.StopTimer()
			p.mu.Lock()
			for _, w := range p.procs {
				if !w.busy {
					p.drop(w)
				}
			}
			p.mu.Unlock()
		})
	}
}
