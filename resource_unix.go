//go:build unix

package lro

import "syscall"

// oNonblock opens a file without waiting: a FIFO put in place of an
// offloaded file cannot hang a resource read.
const oNonblock = syscall.O_NONBLOCK
