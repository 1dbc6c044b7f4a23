//go:build !unix

package proxy

import (
	"os/exec"
	"syscall"
)

// childAttr does nothing here: the server is ended alone, with Kill.
func childAttr(*exec.Cmd) {}

// signalGroup ends the server: it cannot be signalled otherwise here.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil && sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
	}
}

// groupAlive reports false: the server has no group here.
func groupAlive(*exec.Cmd) bool { return false }
