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
// its memory until it returns. The places bound what the requests hold
// together (memory, workers); a request waiting holds neither.
//
// Requests queue; they are not refused for arriving together. Each session
// has a line of its own, served in order, and a freed place goes to the
// first request of the session whose turn it is: the one holding the
// fewest places, then the one served longest ago (round robin). A session
// that loops is therefore served no more often than any other, however
// many requests it sends, and a session that asks now and then is served
// at the next place that comes free. A newcomer does not pass a session
// waiting. A request may keep one place spare ([Request.Spare]): while
// several sessions hold or wait, the last free place goes only to a
// session that holds none and waits with one request at most, so that
// beside sessions that loop on slow queries (their lines full), one that
// asks now and then finds a place at once rather than after a slow query
// ends. Such a request is not refused when its wait ends while a place
// held is not yet due back (its holder's [Request.Hold], and a second):
// the next place that comes free is its, so its wait is bounded by the
// longest hold, not cut short of it. A session that has just appeared
// waits 200 ms before it may take that last place, alone or not: long
// enough for a loop that starts with many requests at once to fill its
// line and show itself (two starting together took both of two workers
// otherwise), and a session's requests waiting in an admission in front
// of this one ([Request.Backlog]: lro_extract's calls, before the worker
// pool's line) count as waiting here. What it cannot tell: a session that
// loops one request at a time looks like one that asks now and then, and
// one that loops alone holds every place until another session comes
// (its requests then end one by one, and the rule holds from then).
//
// A request is refused, with a [*BusyError] that says when to retry and
// the counts as they are, only
//
//   - when [SessionDepth] (16) requests of its session wait already: an
//     agent's parallel calls never reach it, a loop does;
//   - when its wait in line ends ([Request.Wait]; the library's callers
//     allow [Wait], 30 s, which the calls of sixteen sessions in turn do
//     not reach), unless it keeps a place spare, asks one at a time and
//     a place held is not due back yet (above);
//   - or when its bytes do not fit ([Ticket.Reserve]).
//
// Every wait is also bounded by the context. A session is whatever the
// caller names ([WithSession]): an MCP session id, a transport's
// connection.
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
