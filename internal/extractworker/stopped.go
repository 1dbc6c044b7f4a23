package extractworker

// A worker stopped from outside (SIGSTOP, a debugger) is alive but never
// answers: a query sent to it waited for its deadline and was told to
// narrow itself. The pool hands out no stopped worker, and a query whose
// worker was stopped meanwhile is told so.

// stopped reports whether the worker's process is stopped.
func (p *proc) stopped() bool { return p.cmd != nil && processStopped(p.pid) }

// idleRunning returns idleFor's worker, unless it was stopped: a stopped
// worker is dropped (killed: SIGKILL ends a stopped process too) and
// replaced, and another one looked for; p.mu is held.
func (p *Pool) idleRunning(key string) *proc {
	for {
		w := p.idleFor(key)
		if w == nil || !w.stopped() {
			return w
		}
		p.drop(w)
		go p.warm()
	}
}

// stoppedFailure is the failure of a query whose worker was found stopped
// at the query's deadline.
func stoppedFailure() *Failure {
	return &Failure{Kind: KindInternal, Message: "query stopped: its worker process had been suspended from outside (SIGSTOP) and did not answer; it was replaced: retry the query as it is"}
}
