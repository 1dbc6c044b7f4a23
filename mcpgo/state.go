package mcpgo

import (
	"sync"
	"sync/atomic"

	"github.com/mcplro/lro"
)

// state is what this adapter learns and shares between the calls that
// make it ([AddHooks], [TaskHandler], [IsProxyClient]), for one
// Offloader. The calls share nothing but the Offloader, so the state
// lives in the Offloader's slot for this adapter
// ([lro.Host.AdapterState]): it goes away with the Offloader, and the
// engine, which cannot name an mcp-go type without every program that
// uses lro linking mcp-go, holds it without knowing what it is.
type state struct {
	// proxies remembers the sessions whose initialize request said
	// clientInfo.proxy = true (the only place an older client says it).
	proxies sync.Map
	// wrapped holds the task tools a wrapper of TaskHandler serves.
	wrapped sync.Map
	// expiries holds, while hooks are installed (hooked), the expiry of
	// each offloaded file a resources/read has just read, by URI, for
	// the hook that gives the result its cache hints: mcp-go's resource
	// handler returns only the contents.
	expiries sync.Map
	hooked   atomic.Bool
}

// stateKey names this adapter's slot in an Offloader.
type stateKey struct{}

// stateOf returns the adapter's state for off.
func stateOf(off *lro.Offloader) *state {
	return off.Host().AdapterState(stateKey{}, func() any { return new(state) }).(*state)
}
