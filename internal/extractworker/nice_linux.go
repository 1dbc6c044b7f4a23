//go:build linux

package extractworker

import (
	"os"
	"strconv"
	"syscall"
)

// lowerPriority sets every thread of the process pid to workerNice. Linux
// keeps a nice value per thread, and a new thread takes its creator's:
// once every thread has it, so will those to come. Threads are listed
// again until no new one appears (one may be created meanwhile).
func lowerPriority(pid int) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	done := map[int]bool{}
	for range 5 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		fresh := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh = true
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, workerNice); err != nil && err != syscall.ESRCH {
				return err
			}
			done[tid] = true
		}
		if !fresh {
			return nil
		}
	}
	return nil
}
