//go:build !unix

package extract

// openOffload opens the offloaded file name for reading, through the FS:
// this platform has no non-blocking open or link count to check, so files
// are only read in this process.
func (o *Tool) openOffload(name string) (*offloadFile, error) {
	return o.openThroughFS(name)
}
