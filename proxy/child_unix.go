//go:build unix && !linux

package proxy

import (
	"os/exec"
	"syscall"
)

// childAttr starts the server in a process group of its own, which the
// proxy ends as a whole. Only Linux can have the kernel end it when the
// proxy dies: elsewhere a server outlives a proxy killed with SIGKILL until
// it sees its stdin close.
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the server's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

// groupAlive reports whether a process is left in the server's process
// group (a zombie not reaped yet counts).
func groupAlive(cmd *exec.Cmd) bool {
	return cmd.Process != nil && syscall.Kill(-cmd.Process.Pid, 0) == nil
}
