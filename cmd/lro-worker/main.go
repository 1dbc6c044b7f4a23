// Command lro-worker runs the lro_extract queries of an MCP server built
// with github.com/mcplro/lro, each worker a process of its own with a
// memory limit, killed at its query's deadline.
//
// Install it beside the server's executable or on PATH, from the same
// version of the module as the server:
//
//	go install github.com/mcplro/lro/cmd/lro-worker@VERSION
//
// The server then starts it for its workers instead of running its own
// executable again. Its own executable works too, but a worker that is the
// server's program runs every init function of the server's packages
// (Go runs them before any main: before lro can take over), in every
// worker, at every start. lro-worker links only the worker's code.
//
// lro.ExtractLimits.WorkerPath, or the LRO_WORKER_PATH environment
// variable, names the program to use instead of searching for it.
package main

import (
	"os"

	"github.com/mcplro/lro/internal/extractworker"
)

func main() {
	os.Exit(extractworker.Main())
}
