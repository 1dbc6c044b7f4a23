package lro_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcplro/lro"
)

// TestAdapterStateIsOneValuePerOffloader: an adapter's slot is made once
// per Offloader, even by first calls that race, and two Offloaders, or two
// adapters of one, never share a value.
func TestAdapterStateIsOneValuePerOffloader(t *testing.T) {
	type keyA struct{}
	type keyB struct{}
	a, b := newOffloader(t, nil), newOffloader(t, nil)
	get := func(h lro.Host, key any) *int {
		return h.AdapterState(key, func() any { return new(int) }).(*int)
	}
	got := make([]*int, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = get(a.Host(), keyA{}) })
	}
	wg.Wait()
	for _, v := range got {
		assert.Same(t, got[0], v, "every first call gets the one value kept")
	}
	assert.Same(t, got[0], get(a.Host(), keyA{}))
	assert.NotSame(t, got[0], get(b.Host(), keyA{}), "another Offloader has its own")
	assert.NotSame(t, got[0], get(a.Host(), keyB{}), "another adapter has its own")
}
