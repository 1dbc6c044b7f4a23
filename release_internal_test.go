package lro

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestReleaseAfter: an offload under releaseBytes schedules no release;
// offloads over it within one delay share one release, which comes.
func TestReleaseAfter(t *testing.T) {
	pending := func() bool {
		memRelease.mu.Lock()
		defer memRelease.mu.Unlock()
		return memRelease.pending
	}
	// Another test's release may be on its way: let it pass first.
	for pending() {
		time.Sleep(10 * time.Millisecond)
	}
	before := memRelease.released.Load()
	releaseAfter(releaseBytes - 1)
	assert.False(t, pending(), "a small offload schedules no release")

	releaseAfter(releaseBytes)
	assert.True(t, pending())
	releaseAfter(4 * releaseBytes) // shares the pending one
	// No deadline: go test's timeout stops a release that never comes.
	for memRelease.released.Load() == before {
		time.Sleep(10 * time.Millisecond)
	}
	assert.False(t, pending(), "the second offload scheduled no release of its own")
}
