// Package admit is the library's one admission: every request that costs
// memory or a worker takes a place here before it is served, and gives it
// back when its answer is written.
//
// # Contract
//
// An [Admission] counts places, not ids: two requests of one id hold two
// places. A place is taken by [Admission.Enter] and freed by
// [Ticket.Leave], which the caller calls once the request's answer is
// written (or, for a request that gets no answer, once its handler has
// returned), never on a cancel alone: a cancelled handler may still hold
// its memory until it returns.
//
// It is fair between sessions: a session waits in line with at most one
// request (a second one of the same session is refused at once, since a
// session that loops must not fill the line), and a freed place goes to
// the waiting session that holds the fewest places, then to the one that
// used places least lately (a session looping on queries that run to their
// deadline uses much; one asking now and then, little), then to the one
// served least recently. A session that was refused after its wait keeps
// its turn: the next place that comes free for it is kept for it for
// [ClaimHold], so that a caller that retries when told finds it. A session
// is whatever the caller names ([WithSession]): an MCP session id, a
// transport's connection.
//
// Every wait is bounded: by [Request.Wait], and by the context. A refusal
// is a [*BusyError], which says when to retry.
//
// A place may be allowed bytes ([Ticket.Reserve]): the bytes the admitted
// requests hold in this process together stay within the bound each
// request names.
//
// # Where it is used
//
//   - stdio ([Stdio]): mcpgo.ServeStdio and the proxy's stdio loop (in front
//     of a -remote server): every request but tools/call (which mcp-go
//     queues itself, and whose sampling answers must still be read) holds
//     a place from the line it was read on to the line of its answer;
//     mcp-go cannot serve a line the reader has not handed it.
//   - lro_extract calls and resources/read of offloaded files, on every
//     host (mcp-go, the official SDK, the proxy): Host.Extract and
//     Host.ReadResource enter the process's admission before they open a
//     file, so no adapter can serve one without it.
//   - the worker processes: a query enters the admission of its pool's
//     workers before it asks for one, so a session that loops cannot keep
//     every worker from the others.
//
// An Admission is safe for concurrent use.
package admit
