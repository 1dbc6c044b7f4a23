//go:build !(linux || darwin || freebsd)

package store

import "errors"

// diskSpace is not implemented here: there is no free-space reserve.
func diskSpace(string) (avail, total int64, err error) {
	return 0, 0, errors.ErrUnsupported
}
