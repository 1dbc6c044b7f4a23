package extractworker

import (
	"bytes"
	"os"
	"strconv"
)

// processStopped reports whether the process pid is stopped (by SIGSTOP,
// SIGTSTP or a tracer): its state in /proc/pid/stat is T or t. A stopped
// worker never answers until something continues it.
func processStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, so the
	// state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T' || b[i+2] == 't'
}
