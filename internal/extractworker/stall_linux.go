//go:build linux

package extractworker

import (
	"bytes"
	"os"
	"strconv"
)

// stopped reports whether the process is stopped (SIGSTOP, SIGTSTP, a
// debugger): such a worker answers nothing until it is continued. Its
// state is the field of /proc/PID/stat after the command's closing
// parenthesis.
func (p *proc) stopped() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	switch b[i+2] {
	case 'T', 't':
		return true
	}
	return false
}
