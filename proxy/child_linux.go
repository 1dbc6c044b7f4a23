package proxy

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// groupAlive reports whether a process is left alive in the server's
// process group. A zombie is not: it is dead, and only its parent's wait
// removes it. The parent of what the server left is init, or the
// nearest subreaper, which may reap late (a second and more in some
// containers) or never (a proxy that is its container's PID 1): counted,
// such a zombie held every ending for the grace, and had it end with a
// warning that something outlived SIGTERM.
func groupAlive(cmd *exec.Cmd) bool {
	if cmd.Process == nil || syscall.Kill(-cmd.Process.Pid, 0) != nil {
		return false
	}
	return livingInGroup(cmd.Process.Pid)
}

// livingInGroup reports whether /proc lists a process of the group pgid
// that is not a zombie; true when /proc cannot tell (not mounted, or of
// another PID namespace).
func livingInGroup(pgid int) bool {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		state, group, ok := procStat(e.Name())
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat returns the state and the process group of the process pid,
// from /proc/pid/stat; not ok when it is gone or the file unreadable.
func procStat(pid string) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(f[2])
	return f[0][0], pgid, err == nil
}
