//go:build linux

package extractworker

import (
	"bytes"
	"os"
	"strconv"
	"time"
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

// cpuTime returns the CPU time the process has used, user and system
// (utime and stime of /proc/PID/stat, in clock ticks of 1/100 s, the
// USER_HZ of every Linux ABI Go supports), if it can be read.
func (p *proc) cpuTime() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	// After the command: state (3), then fields 4 to 13, utime (14), stime (15).
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	s, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * (time.Second / 100), true
}

// dataBytes returns the process's data segment (VmData: its private
// writable mappings, what RLIMIT_DATA bounds), if it can be read.
func (p *proc) dataBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/status")
	if err != nil {
		return 0, false
	}
	_, rest, ok := bytes.Cut(b, []byte("\nVmData:"))
	if !ok {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0, false
	}
	return kb << 10, true
}

// oomKills returns how many processes the kernel's out-of-memory killer
// has ended since boot (oom_kill in /proc/vmstat, Linux 4.13 and later),
// if it can be read.
func oomKills() (uint64, bool) {
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0, false
	}
	_, rest, ok := bytes.Cut(b, []byte("\noom_kill "))
	if !ok {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.ParseUint(string(line), 10, 64)
	return n, err == nil
}
