// Package initpkg is a package of a host program whose init function has
// effects outside its process, as a PID file or a log opened for writing
// has: it appends a line to the file $INITPKG_COUNT each time it runs.
package initpkg

import (
	"fmt"
	"os"
)

func init() {
	if name := os.Getenv("INITPKG_COUNT"); name != "" {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "init in %d\n", os.Getpid())
			f.Close()
		}
	}
}
