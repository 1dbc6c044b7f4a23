package lro

// Host is the face of an Offloader that a host adapter uses: the code that
// translates an MCP SDK's requests and results to the host-neutral
// [host.Call] and [host.Result] of package host and back, and registers the
// tools and resources (package gosdk, package proxy, or an adapter of
// another SDK). A server author needs none of it:
// [Offloader.ServerOption], gosdk.Install and the proxy call it.
//
// Its methods are safe for concurrent use, as the Offloader's are.
type Host struct{ o *engine }

// Host returns o's face for host adapters.
func (o *engine) Host() Host { return Host{o} }
