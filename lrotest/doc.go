// Package lrotest provides what tests of a server that offloads with
// package lro need, as net/http/httptest does for HTTP handlers.
//
// [MemFS] is an in-memory file system for an Offloader, with faults to
// inject (a full disk, a read-only directory, a failed publish), so that
// a test exercises the fallback a real server gets when a write fails:
//
//	mem := lrotest.NewMemFS("/tmp/lro")
//	mem.FailWrite(1, syscall.ENOSPC)
//	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(mem))
//
// The package imports nothing of lro: a test in package lro may use it too.
package lrotest
