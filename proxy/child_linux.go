package proxy

import (
	"os/exec"
	"syscall"
)

// childAttr starts the server in a process group of its own, which the
// proxy ends as a whole (npx and uvx start the server as their own child),
// and has the kernel kill it when the proxy dies, however it dies: a proxy
// killed with SIGKILL leaves no server behind (one started by npx sees its
// stdin close, and MCP servers exit then).
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
