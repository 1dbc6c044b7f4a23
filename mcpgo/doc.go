// Package mcpgo adds Large Result Offloading to MCP servers built on
// github.com/mark3labs/mcp-go: the mcp-go adapter over the host-neutral
// core of package lro ([lro.Host.Serve]), as package gosdk is for the
// official Go SDK.
//
// It owns what is mcp-go's: the tool middleware and the tool filter that
// widens listed output schemas ([ServerOption], [Middleware], [Wrap],
// [WidenTool]), the wrappers of task tools ([TaskHandler], [WrapTask]),
// the hooks that learn of proxy clients and end sessions ([AddHooks],
// [IsProxyClient]), the registration of lro_extract and of the resource
// templates of offloaded files ([AddExtractTool], [AddResources]), and a
// stdio loop with a bound on the requests in flight ([ServeStdio]). Which
// tools are offloaded, and how, is the Offloader's configuration. It is a
// package of its own so that a program on another SDK links none of
// mcp-go.
//
// Wiring takes one option, and one line for lro_extract:
//
//	off, err := lro.New(lro.DefaultConfig())
//	if err != nil { ... }
//	defer off.Close()
//	s := server.NewMCPServer("memory", "1.0.0", mcpgo.ServerOption(off))
//	mcpgo.AddExtractTool(s, off) // optional: lro_extract, for models without a shell
//	return mcpgo.ServeStdio(s)
//
// Functions that register on an mcp-go value (a server, hooks) take it
// first and the Offloader last, as package gosdk's do; those that build a
// handler, an option or a tool take the Offloader first.
//
// # Task tools
//
// An ordinary tool called as a task goes through the middleware. A task
// tool, registered with AddTaskTool, is not reached by tool middleware:
// wrap its handler with [TaskHandler], or [WrapTask] to give it a policy
// of its own. One left unwrapped whose result goes out over the threshold
// is logged once by the hooks of [ServerOption].
package mcpgo
