// Package extractworker runs lro_extract's jq queries in worker processes,
// so that a query that misbehaves costs only itself: a worker has a memory
// limit and is killed at the query's deadline, and the server's own memory
// and handlers are never at stake.
//
// A worker runs Config.Executable, a program that links this package and
// nothing of the server's (cmd/lro-worker, whose main is Main), or, when
// none is set, a copy of the running executable. Either way a Pool starts
// it with an environment variable set, and this package's init function,
// which runs before the program's main (or a test binary's), serves
// requests on stdin and stdout until stdin closes. Any binary that links
// this package (every binary that links lro) is therefore its own worker,
// unchanged; but run again, it runs the init functions of its packages
// again in each worker (Go runs those whose imports are ready before this
// package's): a worker that is not the server's own program runs no code
// of the server's.
//
// Each request names a file by path and by FileID (device, inode, size,
// modification time): the parent opens and checks the file first (see
// Open and Check: a regular file, one link, our user, opened without
// blocking), and the worker, opening it again by path, accepts only that
// same file. The Engine, the code that compiles, decodes and runs, is the
// same in a worker and in the parent when queries run in process.
//
// # Protocol
//
// Frames of a 4-byte length, a JSON header (Request or Response) and
// length-prefixed blobs (the path and query of a request, the results of a
// response), so that results cross as they are, unescaped. A worker first
// writes a hello frame with its protocol version: a process that does not
// (a different binary now at the executable's path, or one that does not
// link this package) is not used; one that speaks another version (a
// stale build of cmd/lro-worker) is given up for the next of
// Config.Fallbacks.
//
// # What a Pool guarantees
//
//   - A query's timeout is its worker's CPU time (see bound.go): the
//     worker stops its query there itself, and one that has used half a
//     second of CPU more (read from /proc on Linux) is killed; a worker
//     that does not answer within four times the timeout plus 2 s of wall-clock
//     time (WallBound; it got too little CPU) is killed too. The caller
//     is told which bound stopped the query.
//   - On Linux (without the race detector) a worker's data segment is
//     capped with RLIMIT_DATA at its size at start plus
//     Config.MemoryBytes; a query that needs more kills its worker, and
//     its caller is told the query needed too much memory. Elsewhere the
//     limit is a soft one for Go's collector, and jqsandbox's watchdog
//     stops queries at their MaxHeapBytes.
//   - A worker found stopped (SIGSTOP, a debugger; checked on Linux
//     before it is handed a query and every 200 ms during one) is killed
//     and replaced, and its query runs again on another worker: neither
//     it nor the calls waiting in line wait for its deadline.
//   - A worker that has mapped more than half of its memory limit (on
//     Linux, checked after a query of 20 ms or more) is replaced: Go keeps
//     what it maps, and the next query, however small, could die at the
//     limit for the one before. Its collector works to stay under that
//     half (a soft limit a heap arena below it), so that an ordinary
//     large query (a sort or group of 100,000 records) leaves its worker,
//     and the records it decoded, to the next query of the file.
//   - A dead, killed or stuck worker is replaced; the pool keeps
//     Config.Workers warm and grows to Config.MaxWorkers under load.
//   - A call waits in line for a place (MaxWorkers of them) at most
//     LineWait (30 s), then fails with a busy error that says when the
//     first running query may end (its wall-clock backstop) and what runs
//     and waits; each session's calls wait in a line of their own (16
//     deep), and the sessions take turns (internal/admit). The last place
//     is kept for a session asking one query at a time (none other held
//     or waiting), whose call waits past LineWait until a place is due
//     back. Past its place, a call waits for a worker
//     (one being replaced, or starting: a start is bounded by two
//     minutes, which only a program that hangs reaches).
//   - Workers run at a lower CPU priority than the server (nice 5), so
//     that queries that spin do not slow the server's other tools.
//   - A worker keeps the exact counts of the queries it ran (CountCache):
//     the same query of a file again stops once its output is full, and
//     the pool sends it to that worker.
//
// What it costs: a process start (tens of milliseconds) per worker, a
// round trip through pipes per query, and memory per worker for its own
// cache of decoded files.
package extractworker
