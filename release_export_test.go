package lro

// MemoryReleases returns how many times an offload has given the
// process's free memory back to the OS (release.go): the tests wait for
// one rather than for a time.
func MemoryReleases() int64 { return memRelease.released.Load() }

// ReleaseBytes is the size of file past which an offload gives memory
// back.
const ReleaseBytes = releaseBytes
