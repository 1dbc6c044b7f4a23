package lro

import "time"

// SetOffloadProgressDelay sets when an offload first reports progress and
// returns the setting it replaced: tests force the report of a fast
// offload with zero.
func SetOffloadProgressDelay(d time.Duration) time.Duration {
	return time.Duration(offloadProgressDelay.Swap(int64(d)))
}
