package extractworker

import (
	"fmt"
	"os"
)

// Main is the main function of a program that is only a worker, such as
// cmd/lro-worker: a Pool configured with Config.Executable runs it, and
// this package's init function serves the Pool before Main is reached.
// Run otherwise (by hand), Main says what the program is for and returns
// the exit code 2.
func Main() int {
	fmt.Fprintf(os.Stderr, "%s: this program runs the lro_extract queries of a server built with github.com/mcplro/lro, started by that server (protocol %d); it is not run by hand\n", os.Args[0], protocolVersion)
	return 2
}
