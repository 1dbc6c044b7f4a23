//go:build !unix

package extractworker

import "time"

// processCPU returns zero: the system does not say (see the unix file).
func processCPU() time.Duration { return 0 }
