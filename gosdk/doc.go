// Package gosdk adds Large Result Offloading to MCP servers built on the
// official Go SDK, github.com/modelcontextprotocol/go-sdk: the same
// behaviour package mcpgo gives mcp-go servers, over the same
// host-neutral core ([lro.Host.Serve]).
//
// Wiring takes three lines besides the server itself:
//
//	off, err := lro.New(lro.DefaultConfig())
//	if err != nil { ... }
//	defer off.Close()
//	s := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1.0.0"}, nil)
//	gosdk.Install(s, off)        // offload large results of the tools with a policy
//	gosdk.AddExtractTool(s, off) // optional: lro_extract, for models without a shell
//
// Which tools are offloaded, and how, is the Offloader's configuration:
// the specification's memory tools have built-in policies, and
// [lro.WithTool] or [lro.WithAnyTool] add others. A handler whose returned
// result is not the set to judge (a budgeted context block, one page of a
// listing) hands the complete set over with [lro.Collect], as under
// mcp-go.
//
// # Differences from the mcp-go adapter
//
// The official SDK's server offers no way to look a tool up, so the
// middleware learns which tools declare an output schema, and whether the
// server has lro_extract, from the tools/list results it sees, and asks
// the server for the list itself the first time a tool it does not know
// is called.
package gosdk
