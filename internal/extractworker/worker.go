package extractworker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// envVar marks a worker process; its value is the worker's workerConfig
// as JSON.
const envVar = "LRO_EXTRACT_WORKER"

// A process started by a Pool is this same executable with envVar set: it
// becomes a worker here, before the program's own initialization and main
// (or a test binary's), and never returns. Every binary that links lro
// therefore serves as its own worker, with no change to its main.
func init() {
	cfg, ok := os.LookupEnv(envVar)
	if !ok {
		return
	}
	os.Unsetenv(envVar)
	os.Exit(serve(cfg, os.Stdin, os.Stdout))
}

// gcPercent is the workers' GOGC, and warmHeapBytes the heap they grow
// to before their first collection: Go's smallest heap goal, 4 MiB at
// GOGC 100, scaled by GOGC.
const (
	gcPercent     = 400
	warmHeapBytes = (4 << 20) * gcPercent / 100
)

// heapSink keeps warmHeap's allocations from being optimized away.
var heapSink []byte

// warmHeap touches warmHeapBytes of heap, then drops them. A fresh
// process faults its heap in page by page as it first grows, and a
// worker's first thirty queries or so took twice as long as the next
// ones (500 records, measured on a virtual machine, where a fault costs
// most); after the first collection the pages are the heap's to reuse.
func warmHeap() {
	const chunk = 512 << 10
	for range warmHeapBytes / chunk {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += 4 << 10 {
			b[i] = 1
		}
		heapSink = b
	}
	heapSink = nil
}

// selfKillGrace is how long past a query's deadline a worker ends itself,
// if its parent has not killed it first (after killGrace).
const selfKillGrace = 2 * time.Second

// workerConfig is what a worker is told through envVar.
type workerConfig struct {
	// MemoryBytes is the memory the worker may map beyond what it had at
	// start (a hard limit where the platform has one); 0 means none.
	MemoryBytes uint64 `json:"memory_bytes"`
	// CacheBytes is the FileCache budget.
	CacheBytes int64 `json:"cache_bytes"`
}

// softLimit is the Go memory limit of a worker that may map memory
// bytes beyond its start: under half of them (what makes a worker spent,
// see proc.spent), less a heap arena that the runtime maps at once, so
// that the collector keeps an ordinary large query (a sort of 100,000
// records) from mapping enough to get its worker replaced, and the
// records it decoded, kept in the worker, lost to the next query. A query
// that needs more goes past it up to the hard limit, as before.
func softLimit(memory uint64) int64 {
	return int64(max(memory/2, 2*heapArena) - heapArena)
}

// heapArena is the unit in which Go maps its heap on 64-bit Linux.
const heapArena = 64 << 20

// serve runs the worker loop: a request in, a response out, until in is
// closed. It returns the exit code.
func serve(cfgText string, in io.Reader, out *os.File) int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(cfgText), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "lro extract worker: bad configuration %q: %v\n", cfgText, err)
		return 2
	}
	// Whatever else prints to stdout must not corrupt the protocol.
	os.Stdout = os.Stderr
	if cfg.MemoryBytes > 0 {
		// The collector works harder as the limit nears, so that garbage
		// does not reach the hard limit before live data does; below it,
		// a worker's heap is small and collecting at every doubling would
		// cost a query a good part of its time.
		debug.SetMemoryLimit(softLimit(cfg.MemoryBytes))
		debug.SetGCPercent(gcPercent)
		warmHeap() // part of the footprint the limit is counted from
		if err := limitMemory(cfg.MemoryBytes); err != nil {
			fmt.Fprintf(os.Stderr, "lro extract worker: %v\n", err)
			return 2
		}
	}
	w := bufio.NewWriterSize(out, 64<<10)
	if writeFrame(w, hello{Protocol: protocolVersion, PID: os.Getpid()}, nil) != nil || w.Flush() != nil {
		return 1
	}
	// While the first request is on its way, not before the hello that
	// the parent waits for.
	go jqsandbox.Preload()
	e := &Engine{Files: NewFileCache(cfg.CacheBytes), Queries: &QueryCache{}, Counts: &CountCache{}}
	if cfg.CacheBytes > 0 { // a cache turned off keeps no answers either
		e.Answers = NewAnswerCache(DefaultAnswerBytes)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		req, err := readRequest(r)
		if err != nil {
			if err == io.EOF {
				return 0 // the parent closed the pipe: we are done
			}
			fmt.Fprintf(os.Stderr, "lro extract worker: %v\n", err)
			return 1
		}
		resp := answer(e, req)
		if writeFrame(w, resp, resp.Values) != nil || w.Flush() != nil {
			return 1
		}
		if resp.Retire {
			return 0 // a builtin still runs: the parent replaces this worker
		}
	}
}

// answer runs req within its bounds: Limits.Timeout of CPU time, which
// stops the query through its context, and WallBound of it in wall-clock
// time, which jqsandbox's own deadline enforces. The parent kills a
// worker that overruns either; should the parent be gone (killed
// itself), the worker must not run a stuck builtin for hours on its own.
func answer(e *Engine, req *Request) *Response {
	bound := req.Limits.Timeout
	if bound <= 0 {
		bound = jqsandbox.DefaultTimeout
	}
	wall := WallBound(bound)
	req.Limits.Timeout = wall
	orphan := time.AfterFunc(wall+selfKillGrace, func() { os.Exit(4) })
	defer orphan.Stop()
	ctx, used, stop := boundCPU(context.Background(), bound)
	defer stop()
	resp := e.Run(ctx, req, workerInput(req))
	if f := resp.Failure; f != nil && f.wall {
		resp.Failure = WallFailure(bound, used())
	}
	return resp
}

// workerInput opens the request's file by its path, and accepts it only if
// it is the file the parent checked.
func workerInput(req *Request) Input {
	return Input{
		Key:  req.File.Key(),
		Size: req.File.Size,
		Open: func() (io.Reader, func(), error) {
			f, err := openChecked(req)
			if err != nil {
				return nil, nil, err
			}
			if req.Text != nil {
				return f, func() { f.Close() }, nil // lines: the header is line 1
			}
			// Skip the header, as the parent does, so that records are
			// numbered alike whether they are cached or read. (The
			// records' reader has a buffer of its own, and reads past
			// this small one.)
			r := bufio.NewReaderSize(f, 4<<10)
			if err := skipLine(r); err != nil {
				f.Close()
				return nil, nil, &Failure{Kind: KindFile, Message: "reading the file: " + err.Error()}
			}
			return r, func() { f.Close() }, nil
		},
		OpenAt: func() (io.ReaderAt, func(), error) {
			f, err := openChecked(req)
			if err != nil {
				return nil, nil, err
			}
			// Offsets count from the first record, as Open reads.
			n, err := lineLen(bufio.NewReaderSize(f, 4<<10))
			if err != nil {
				f.Close()
				return nil, nil, &Failure{Kind: KindFile, Message: "reading the file: " + err.Error()}
			}
			return io.NewSectionReader(f, n, req.File.Size-n), func() { f.Close() }, nil
		},
	}
}

// openChecked opens the file of req, which must be the file the parent
// checked.
func openChecked(req *Request) (*os.File, error) {
	f, id, err := Open(req.Path)
	if err != nil {
		return nil, &Failure{Kind: KindFile, Message: "cannot read the file: " + strings.TrimPrefix(err.Error(), "open ")}
	}
	if id != req.File {
		f.Close()
		return nil, &Failure{Kind: KindFile, Message: "the file changed while it was being read; try again"}
	}
	return f, nil
}

// lineLen reads past the first line of r and returns its length.
func lineLen(r *bufio.Reader) (int64, error) {
	var n int64
	for {
		chunk, err := r.ReadSlice('\n')
		n += int64(len(chunk))
		if err == nil || err == io.EOF {
			return n, nil
		}
		if err != bufio.ErrBufferFull {
			return 0, err
		}
	}
}

// skipLine reads past the first line of r.
func skipLine(r *bufio.Reader) error {
	_, err := lineLen(r)
	return err
}
