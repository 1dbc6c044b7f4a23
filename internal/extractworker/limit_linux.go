//go:build linux && !race

package extractworker

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// hardLimit reports whether limitMemory enforces a hard bound.
const hardLimit = true

// limitMemory caps the worker's data segment (RLIMIT_DATA: every private
// writable mapping, which is where Go puts its heap and stacks) at what it
// holds now plus n bytes. Past it, mmap fails and the Go runtime dies with
// "out of memory": the parent sees the worker exit and reports the query
// as too large. Unlike RLIMIT_AS it does not count the address space Go
// reserves without using (over a gigabyte at start).
func limitMemory(n uint64) error {
	base, err := vmData()
	if err != nil {
		return err
	}
	lim := base + n
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: lim, Max: lim})
}

// vmData reads VmData from /proc/self/status, in bytes.
func vmData() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmData:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmData: %v", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}
