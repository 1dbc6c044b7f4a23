//go:build !linux

package extractworker

// stopped reports whether the process is stopped. This platform has no
// cheap way to tell: a stopped worker is killed at its query's deadline.
func (p *proc) stopped() bool { return false }
