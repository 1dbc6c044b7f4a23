//go:build !linux

package extractworker

import "time"

// stopped reports whether the process is stopped. This platform has no
// cheap way to tell: a stopped worker is killed at its query's deadline.
func (p *proc) stopped() bool { return false }

// cpuTime returns the process's CPU time; not known here: the worker's
// own watch (boundCPU) and the wall-clock backstop bound its query.
func (p *proc) cpuTime() (time.Duration, bool) { return 0, false }

// dataBytes returns the process's data segment; not known here.
func (p *proc) dataBytes() (uint64, bool) { return 0, false }

// oomKills returns how many processes the out-of-memory killer has ended;
// not known here.
func oomKills() (uint64, bool) { return 0, false }
