//go:build !unix

package lro

// oNonblock is 0 where opening a FIFO does not block.
const oNonblock = 0
