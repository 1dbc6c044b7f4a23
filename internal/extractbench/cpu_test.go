//go:build linux

package extractbench

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU time, which a machine busy with other work does not stretch as it
// stretches wall time: the workers run at nice 5 and the floors at the
// caller's priority, so that on a loaded machine wall time favours the
// floors. (Linux; elsewhere these read zero and the CPU metrics are left
// out.)

// cpuSelf returns the CPU time of this process: the client, the server
// and the in-process floor.
func cpuSelf() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// cpuWaited returns the CPU time of the children this process waited for:
// the shell pipelines of the jq floor.
func cpuWaited() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuChildren returns the CPU time the running children of this process
// (the worker processes) have used, from /proc/PID/stat, in clock ticks
// (10 ms): sum it over many calls. A worker that exits takes its time
// with it.
func cpuChildren() time.Duration {
	var sum time.Duration
	for pid := range children() {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 13 {
			continue
		}
		for _, x := range f[11:13] { // utime, stime
			if t, err := strconv.ParseInt(x, 10, 64); err == nil {
				sum += time.Duration(t) * (time.Second / clockTicks)
			}
		}
	}
	return sum
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100
