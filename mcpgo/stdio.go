package mcpgo

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro/internal/admit"
)

// MaxStdioRequests is how many requests other than tools/call
// [ServeStdio] serves at once, answered or waiting for their answer to be
// written: past it, it reads no more of stdin until an answer is written.
const MaxStdioRequests = 32

// ServeStdio serves s on stdin and stdout until they close or the process
// gets SIGINT or SIGTERM, as server.ServeStdio does, with a bound on the
// requests in flight. mcp-go's stdio server serves every request but
// tools/call on a goroutine of its own, and each answer waits there, encoded,
// until it is written: a client that sends a thousand resources/read of a
// large file and never reads the answers held 2 GiB of them. ServeStdio
// stops reading stdin while MaxStdioRequests such requests are unanswered
// (tools/call has mcp-go's own bounded queue), so such a client is
// answered as fast as it reads, and holds at most MaxStdioRequests answers.
//
// Requests are counted, not ids: two requests of one id hold two places.
// A place is freed when an answer is written, and only then: a cancelled
// request is still answered by mcp-go once its handler returns, and until
// then its handler and its answer hold memory.
func ServeStdio(s *server.MCPServer, opts ...server.StdioOption) error {
	ss := server.NewStdioServer(s)
	for _, opt := range opts {
		opt(ss)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return admit.Listen(ctx, ss, os.Stdin, os.Stdout, MaxStdioRequests)
}
