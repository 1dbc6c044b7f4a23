//go:build unix && !linux

package extractworker

import "syscall"

// lowerPriority sets the process pid to workerNice (a process's nice value
// is the whole process's here).
func lowerPriority(pid int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, pid, workerNice)
}
