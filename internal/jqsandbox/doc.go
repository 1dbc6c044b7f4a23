// Package jqsandbox runs untrusted jq queries over JSONL record files in
// process, with github.com/itchyny/gojq, within bounds on time, memory,
// input and output.
//
// The query text and its variables are assumed hostile (they come from an
// LLM that may be prompt-injected). Compile therefore rejects modules
// (import, include), input and inputs, and gojq's internal functions; $ENV
// and env are empty objects; debug and stderr pass their input through
// silently and input_filename is null, so that nothing reaches the
// process's stdout or stderr, which carry the MCP transport.
//
// # Where the guards stand
//
// lro_extract runs this package in worker processes (package
// extractworker) that have a hard memory limit and are killed at their
// deadline: there the bounds below are what stops an ordinary runaway
// query cleanly, with a precise error and the worker's cache kept, and
// the process boundary is what stops everything else (a builtin stuck in
// native code, an allocation no guard foresaw). When queries run in the
// server's own process, the bounds below are all there is: that is why
// each guard is kept, and why a guard missing is a way to crash the
// server there.
//
// # Memory and time
//
// Go cannot recover from running out of memory or stack, so every bound
// must hold before an allocation, not after it:
//
//   - Runs are serialized process-wide, so that heap growth can be
//     attributed to the running query. The heap is measured with
//     runtime/metrics (cheap, no stop-the-world) by the evaluating goroutine
//     itself every 4096 VM instructions (gojq calls the context's Done
//     before each one), and by a watchdog goroutine every 2ms. Growth beyond
//     Limits.MaxHeapBytes is confirmed by a garbage collection, then aborts
//     the run with ErrMemory; gojq checks the context before each VM
//     instruction, so runaway loops and recursion (which gojq runs on heap
//     allocated stacks, not Go's) stop promptly. The deadline
//     (Limits.Timeout) cancels the same context.
//   - A single builtin call cannot be interrupted: "x" * 1e9 allocates its
//     result at once, .[1e8] = 1 allocates 1.6 GB of slots, tojson of a
//     value sharing subtrees (reduce range(60) as $i (0; [., .])) is 2^60
//     nodes long, and comparing or encoding a value nested millions of
//     levels deep overflows Go's stack. The query is therefore rewritten so
//     that each such builtin and operator is preceded by a guard that
//     estimates its cost and aborts the run (ErrMemory, or ErrTooComplex
//     for nesting beyond 10000 levels and superlinear work) before it runs.
//     No single call may allocate more than MaxHeapBytes/8 at once, or more
//     than what is left of MaxHeapBytes.
//
// # Caveats
//
//   - The heap is the process's: allocations by other goroutines during a
//     run count against it, and the collections a run forces (only when it
//     nears its budget) pause them too.
//   - A hostile run stops once the heap has grown by about MaxHeapBytes
//     (measured: 525 to 576 MiB for the default 512 MiB), but Go's collector
//     lets garbage grow up to the live heap again before reclaiming it, so
//     the process may map about 2.5 times MaxHeapBytes meanwhile (1.3 GiB
//     measured). Go's out-of-memory is fatal: the memory available to the
//     process must cover that plus its own live heap (GOMEMLIMIT makes the
//     collector work harder near a ceiling). In Slurp mode the decoded
//     input, several times its JSONL size, must fit in MaxHeapBytes.
//   - Builtins that allocate about the size of their input at most (+ on
//     literals, reverse, keys, ascii_downcase...) are not guarded one by
//     one: the checkpoints catch the growth right after them. Indexing an
//     array with an array (.[[1,2]], a sub-array search) is only bounded
//     to 16-element patterns, its cost also grows with the indexed array.
//   - Runs are one at a time; Run waits its turn for up to its timeout plus a
//     second, then returns ErrBusy. If a builtin keeps running past the
//     deadline, Run returns anyway one second later, but the evaluation
//     keeps the slot until it ends; the guards keep every builtin call to
//     about a second of work at the defaults.
//   - Regular expressions are compiled once and kept: the small ones that
//     test answers process-wide (at most 64 of at most 1024 instructions,
//     regex.go), the others in the Query, as gojq keeps them (at most 1000
//     per run): compile untrusted queries per request, and bound what a
//     trusted query is given as a pattern with PatternCost.
//   - A builtin call that runs long without allocating (a regular
//     expression over a long string, gojq's match recounting the runes of
//     the prefix for each match) is not guarded: it cannot be interrupted,
//     and Run returns ErrStuck with the reason after its deadline. Run such
//     queries where the process can be killed.
//   - Numbers are float64, as in jq 1.6; gojq prints them with the shortest
//     representation that round-trips and switches to exponents only beyond
//     1e21 or below 1e-6, where jq 1.6 prints 1e+17 and 1e-07. A runtime
//     error in Stream mode stops the run (jq would go on with the next
//     record).
//   - gojq sorts object keys; jq 1.6 keeps their insertion order. Results
//     print keys in the input's order for objects passed through and in
//     the query's for objects it builds, which is jq's order for every
//     recipe and the usual queries (see keyOrder in order.go for the
//     rules and what they cannot follow). keys_unsorted and to_entries
//     follow that order too; iterating an object (.[], paths, add) follows
//     gojq's sorted keys.
package jqsandbox
