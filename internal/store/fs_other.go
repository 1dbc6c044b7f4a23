//go:build !unix

package store

import "os"

// oNonblock is 0 where opening a FIFO does not block.
const oNonblock = 0

// checkOwner cannot tell owners on this platform, whose mode bits do not
// describe access either: the user's own temporary directory has to do.
func checkOwner(string, os.FileInfo, bool) error { return nil }
