//go:build !unix

package scratch

// processGone cannot tell here: nothing is swept.
func processGone(int) bool { return false }

// ownedDir cannot tell here.
func ownedDir(string) bool { return false }
