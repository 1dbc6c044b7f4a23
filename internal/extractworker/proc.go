package extractworker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// proc is one worker process, seen from the parent. Its pipe carries one
// exchange at a time: the Pool hands it to one caller at a time.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	// stdoutFile is stdout's pipe, closed by close once no exchange can
	// read it any more.
	stdoutFile *os.File
	stderr     *tail
	pid        int
	exited     chan struct{} // closed once the process has been waited for
	// timedOut is set when the parent killed the process at its
	// wall-clock backstop, cpuOut when at its bound of CPU time.
	timedOut, cpuOut atomic.Bool
	// cpuAtStart is the process's CPU time when the exchange in progress
	// started (see proc.cpuTime), cpuUsed what it used since, as last read.
	cpuAtStart time.Duration
	cpuUsed    atomic.Int64
	// stalled is set when the parent killed the process because it was
	// stopped (SIGSTOP) during an exchange.
	stalled atomic.Bool

	// dataBase is the worker's data segment when it said hello (0 when
	// unknown), and dataRoom what its limit lets it map beyond.
	dataBase, dataRoom uint64

	// Guarded by Pool.mu.
	busy     bool
	started  time.Time // when the exchange in progress started
	deadline time.Time // when it must end
	idle     time.Time // since when it is idle
	files    []string  // keys of files it reported cached, most recent last
}

const (
	// helloWait bounds the start of a worker: a binary that does not
	// answer as a worker within it is not one. Only a program that hangs
	// reaches it: a loaded machine (load 20 on 2 cores) took 14 s to
	// start a worker, and a bound of 10 s failed calls there; a program
	// that is no worker exits or writes something else at once.
	helloWait = 2 * time.Minute
	// killGrace is how long past its bound a query's worker may take
	// to answer: the worker's own bound fires first for anything that
	// the VM can interrupt, and this covers what it cannot.
	killGrace = 500 * time.Millisecond
	// workerNice is the workers' nice value: below the server's priority
	// (the server's is most likely 0), so that queries that spin on every
	// core leave the server's other tools their CPU. Five, not more: each
	// step of nice is a quarter less CPU beside a busy process, and at 10
	// (a weight of 110 against 1,024) a recipe of 0.8 s of CPU beside
	// eight busy loops needed over 30 s of wall time, near the wall-clock
	// backstop; at 5 (335) it needs about 10 s, and the server still
	// weighs three times a worker.
	workerNice = 5
	// maxRememberedFiles bounds proc.files.
	maxRememberedFiles = 32
	// stallCheck is how often an exchange checks that its worker is not
	// stopped (see proc.stopped) and has not overrun its CPU time.
	stallCheck = 200 * time.Millisecond
)

// errStalled: the worker was stopped from outside during an exchange, and
// killed; the query was not at fault.
var errStalled = errors.New("extractworker: the worker stopped answering")

// executable is the program a worker runs: this very binary. On Linux
// /proc/self/exe still names it when its file was replaced or deleted
// (an upgrade in place), where os.Executable would name the new one.
func executable() (string, error) {
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return "/proc/self/exe", nil
		}
	}
	return os.Executable()
}

// errProtocol: the program started answered with another protocol
// version (another version of this module).
var errProtocol = errors.New("extractworker: the worker is another version")

// startProc starts a worker, running the program exe (this executable
// when empty), and waits for its hello.
func startProc(exe string, cfg workerConfig) (*proc, error) {
	args := []string{exe}
	if exe == "" {
		self, err := executable()
		if err != nil {
			return nil, fmt.Errorf("extractworker: cannot find this executable: %w", err)
		}
		exe, args = self, []string{os.Args[0]}
	}
	cfgText, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Args = args
	cmd.Env = append(os.Environ(), envVar+"="+string(cfgText), "GOTRACEBACK=single")
	p := &proc{cmd: cmd, stderr: &tail{max: 8 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if raceEnabled {
		// Let the race detector's reports from workers reach the test
		// output.
		cmd.Stderr = io.MultiWriter(p.stderr, os.Stderr)
	}
	// Pipes of our own rather than cmd's: cmd.Wait closes those, and
	// Wait runs as soon as the process exits, while its last words may
	// still be in the pipe.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	p.stdin, p.stdout = inW, bufio.NewReaderSize(outR, 64<<10)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("extractworker: cannot start a worker: %w", err)
	}
	p.stdoutFile = outR
	p.pid = cmd.Process.Pid
	// At once, so that the worker's own start (its runtime, its heap
	// warmed) already yields to the server; again after the hello, for
	// the threads started meanwhile.
	lowerPriority(p.pid)
	go func() {
		cmd.Wait()
		close(p.exited)
	}()

	t := time.AfterFunc(helloWait, p.kill)
	var h hello
	_, err = readFrame(p.stdout, frameSlack, &h)
	stopped := t.Stop()
	switch {
	case err != nil && !stopped:
		err = fmt.Errorf("extractworker: the worker did not start within %v", helloWait)
	case err != nil:
		p.kill()
		<-p.exited
		err = fmt.Errorf("extractworker: the worker did not start: %v%s", err, p.stderr.note())
	case h.Protocol != protocolVersion:
		err = fmt.Errorf("%w: %s speaks protocol %d, not %d", errProtocol, exe, h.Protocol, protocolVersion)
	}
	if err == nil {
		// After the hello: by then the runtime's threads are up, and
		// threads created later take the priority of their creator.
		if e := lowerPriority(p.pid); e != nil {
			err = fmt.Errorf("extractworker: cannot lower the worker's priority: %w", e)
		}
		if hardLimit && cfg.MemoryBytes > 0 {
			p.dataBase, _ = p.dataBytes()
			p.dataRoom = cfg.MemoryBytes
		}
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// kill ends the process (closing its pipes); it may be called at any time.
func (p *proc) kill() {
	p.stdin.Close()
	p.cmd.Process.Kill()
}

// close kills the process and releases its pipes. Only the holder of the
// proc (the caller of an exchange, or the Pool for an idle proc) calls it.
func (p *proc) close() {
	p.kill()
	p.stdoutFile.Close()
}

// alive reports whether the process has not exited yet.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// exchange sends req and reads the response. A worker that uses timeout
// of CPU time plus killGrace (where its CPU time can be read), or that does
// not answer within WallBound(timeout) plus killGrace, is killed. A worker
// that dies is reported
// as a Failure, never an error: the caller's query did that. The errors
// are for a worker that was already unusable (its pipe closed before it
// read anything), and for one found stopped (SIGSTOP) and killed: the
// query may run again elsewhere.
func (p *proc) exchange(req *Request, timeout time.Duration, maxResponse int) (*Response, error) {
	t := time.AfterFunc(WallBound(timeout)+killGrace, func() {
		p.timedOut.Store(true)
		p.kill()
	})
	defer t.Stop()
	p.cpuAtStart, _ = p.cpuTime()
	p.cpuUsed.Store(0)
	defer p.watch(timeout + killGrace)()
	// Whether the system's out-of-memory killer ends a process meanwhile
	// tells how a worker killed by a signal died.
	oom, oomKnown := oomKills()
	if err := writeFrame(p.stdin, req, req.blobs()); err != nil {
		p.kill()
		return nil, fmt.Errorf("extractworker: the worker is gone: %w", err)
	}
	var resp Response
	blobs, err := readFrame(p.stdout, maxResponse+frameSlack, &resp)
	if err != nil {
		p.kill()
		<-p.exited
		if p.stalled.Load() && !p.timedOut.Load() && !p.cpuOut.Load() {
			return nil, errStalled
		}
		return &Response{Failure: p.deathFailure(timeout, err, func() bool {
			n, ok := oomKills()
			return !oomKnown || !ok || n != oom
		})}, nil
	}
	resp.Values = blobs
	return &resp, nil
}

// watch checks every stallCheck that the worker is not stopped and has
// not used more than cpu of CPU time since the exchange started, and
// kills it if it is or has, until the returned function is called. A
// stopped worker would otherwise hold its query, and the calls waiting in
// line, until the wall-clock backstop; one whose query is stuck in a
// builtin that its own CPU bound cannot interrupt, too.
func (p *proc) watch(cpu time.Duration) (stop func()) {
	var mu sync.Mutex
	done := false
	var t *time.Timer
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		if p.stopped() {
			p.stalled.Store(true)
			p.kill()
			return
		}
		n, ok := p.cpuTime()
		p.cpuUsed.Store(int64(n - p.cpuAtStart))
		if ok && n-p.cpuAtStart > cpu {
			p.cpuOut.Store(true)
			p.kill()
			return
		}
		t.Reset(stallCheck)
	}
	mu.Lock()
	t = time.AfterFunc(stallCheck, check)
	mu.Unlock()
	return func() {
		mu.Lock()
		done = true
		t.Stop()
		mu.Unlock()
	}
}

// spent reports whether the worker has mapped more than half of what its
// memory limit lets it (a query grew its heap that far, or was stopped
// there): Go keeps what it mapped, and the next query, however small,
// could meet the limit in the runtime's own mappings and die for it. A
// spent worker is replaced.
func (p *proc) spent() bool {
	if p.dataBase == 0 {
		return false
	}
	n, ok := p.dataBytes()
	return ok && n > p.dataBase+p.dataRoom/2
}

// deathFailure explains why the worker died during a query. oomMaybe
// reports whether the system's out-of-memory killer may have ended it
// (it ended a process meanwhile, or that is not known).
func (p *proc) deathFailure(timeout time.Duration, readErr error, oomMaybe func() bool) *Failure {
	if p.cpuOut.Load() {
		return CPUFailure(timeout)
	}
	if p.timedOut.Load() {
		return WallFailure(timeout, max(0, time.Duration(p.cpuUsed.Load()))) // as last read: the process is gone
	}
	if errors.Is(readErr, errFrameTooLarge) {
		return &Failure{Kind: KindLimit, Message: "query results were larger than allowed and were dropped; narrow it"}
	}
	msg := p.stderr.String()
	// Go's own words when it cannot map memory, or grow a stack; a
	// thread's stack is mapped too (cgo's pthread_create fails then).
	for _, s := range []string{"out of memory", "cannot allocate memory", "stack exceeds", "stack overflow", "pthread_create failed"} {
		if strings.Contains(msg, s) {
			return MemoryFailure()
		}
	}
	if st := p.cmd.ProcessState; st != nil && !st.Exited() {
		// Killed by a signal we did not send: the out-of-memory killer,
		// or someone else, whom the query is not known to have provoked.
		if oomMaybe() {
			return &Failure{Kind: KindLimit, Message: "query stopped: the worker process running it was killed (" + st.String() + "), most likely by the system's out-of-memory killer; narrow the query, or retry later"}
		}
		return &Failure{Kind: KindInternal, Message: "query stopped: the worker process running it was killed from outside (" + st.String() + "), by none of this server's limits, while the system had memory to spare; the query itself is not known to be at fault: retry it"}
	}
	return &Failure{Kind: KindInternal, Message: "query stopped: its worker process failed" + p.stderr.note()}
}

// tail keeps the first and the last bytes written to it: a worker's
// stderr, which tells how it died (Go prints "fatal error: out of memory"
// first, then the stacks).
type tail struct {
	mu   sync.Mutex
	max  int
	head []byte
	buf  []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max/4 - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, len(b))]...)
	}
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// String returns the first and last bytes written.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + "\n...\n" + string(t.buf)
}

// note returns the first line the worker printed, for a message.
func (t *tail) note() string {
	t.mu.Lock()
	line, _, _ := bytes.Cut(bytes.TrimSpace(t.head), []byte("\n"))
	t.mu.Unlock()
	if len(line) == 0 {
		return ""
	}
	if len(line) > 200 {
		line = line[:200]
	}
	return " (" + string(line) + ")"
}
