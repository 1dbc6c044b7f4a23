// Package lrotest provides what tests of a server that offloads with
// package [github.com/mcplro/lro] need, as net/http/httptest does for HTTP
// handlers.
//
// [MemFS] is an in-memory file system for an Offloader, with faults to
// inject (a full disk, a read-only directory, a failed publish), so that
// a test exercises the fallback a real server gets when a write fails:
//
//	mem := lrotest.NewMemFS("/tmp/lro")
//	mem.FailWrite(1, syscall.ENOSPC)
//	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(mem))
//
// [ReadOffloaded] reads the file a descriptor points to, its header and
// its records, from a MemFS or from the disk:
//
//	f, err := lrotest.ReadOffloaded(mem, reply.Descriptor.FilePath)
//	// f.Header.Count, f.Records[0]
//
// # Calling the tools
//
// Each SDK has an in-process client that calls a tool and returns its
// reply, the descriptor decoded when the result was offloaded:
// [github.com/mcplro/lro/lrotest/mcpgotest] for mcp-go and
// [github.com/mcplro/lro/lrotest/gosdktest] for the official SDK. They are
// packages of their own so that the tests of a server on one SDK compile
// none of the other, as a server's binary links only its own SDK's
// adapter:
//
//	c := mcpgotest.Connect(t, s) // or gosdktest.Connect(t, s)
//	reply := c.Call(t, "list_memories", map[string]any{"limit": 500})
//
// # Time
//
// A test of the TTL runs in a testing/synctest bubble, whose clock moves
// only when every goroutine in it waits: an hour of the janitor passes at
// once (see the example of MemFS). Make the Offloader inside the bubble,
// close it before the bubble ends, and, if the test calls lro_extract
// there, give it lro.ExtractLimits{InProcess: true}: a bubble runs no
// worker process.
//
// The package imports nothing of lro: a test in package lro may use it too.
package lrotest
