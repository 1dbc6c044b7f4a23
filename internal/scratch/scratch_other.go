//go:build !unix

package scratch

import "errors"

// processGone cannot tell here: nothing is swept.
func processGone(int) bool { return false }

// ownedDir cannot tell here: nothing is swept.
func ownedDir(string) bool { return false }

// dirLock holds nothing here: no sweep removes a directory, so none needs
// a lock to be kept.
type dirLock struct{}

// lockDir succeeds for the maker of a directory and fails for a sweep,
// which then keeps the directory: without a lock the system holds for a
// process, a directory is never taken for one a killed process left.
func lockDir(_ string, own bool) (dirLock, error) {
	if own {
		return dirLock{}, nil
	}
	return dirLock{}, errNoLock
}

var errNoLock = errors.New("no directory locks on this system")

func (dirLock) unlock() {}
