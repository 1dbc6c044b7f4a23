// Package proxy is a local MCP server in front of another MCP server, a
// local stdio server it starts ([Config.Command], in any language) or a
// remote streamable-HTTP one ([Config.Remote]), that offloads the
// server's large tool results on this machine, where the model's shell
// (or lro_extract) can read them: the specification's Local LRO Proxy. It
// sits beside package lro as net/http/httputil sits beside net/http: a
// server that offloads its own results imports only lro and links none of
// the client code this package needs. The lro-proxy command is a thin main
// over it.
//
//	off, err := lro.New(lro.DefaultConfig())
//	if err != nil { ... }
//	defer off.Close()
//	p, err := proxy.New(off, proxy.Config{
//		Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"},
//		Extract: true,
//	})
//	if err != nil { ... }
//	defer p.Close()
//	err = p.Serve(ctx, os.Stdin, os.Stdout)
//
// # A local server
//
// With [Config.Command], [Proxy.Serve] starts the server and relays all
// of MCP between the client and it, message by message, ids and all: the
// server's capabilities, tools, resources (list, templates, read,
// subscriptions and their updates), prompts, completions, logging,
// progress and cancellation both ways, list-changed notifications,
// pagination cursors, and the server's requests to the client (sampling,
// elicitation, roots). The proxy steps in only for offloading: each
// tools/call result is judged as below, the output schemas of the judged
// tools are widened, and lro_extract and the lro:// resource templates
// are served beside the server's own (alone where the server lacks the
// listing). A small result the proxy has nothing to change in goes to
// the client as the server wrote it. Each message of the server is
// bounded by [Config.MaxResponseBytes] (a longer one is skipped as it
// streams by; the request it answers gets an error that names the limit)
// and each request by [Config.CallTimeout] (the request gets an error and
// the server a cancellation). As of a remote, the proxy keeps the
// server's current tool listing only, refuses one larger than
// [Config.MaxToolsBytes] (the client's tools/list gets an error that names
// the limit), and tells the client of the server's tool list changes at
// most once a second. A notification of the server (of a local server or
// a remote) larger than [Config.MaxNotificationBytes] is cut to one of
// the same method within it, marked as cut (see the Config field). Every tools/call answer, and a task's result
// (tasks/result), passes the Offloader's exit gate: one the proxy cannot read as a tool result (a JSON-RPC error,
// content missing, an item of an unknown type, a request for input) goes
// as it came only when the gate leaves it unchanged. A request whose id
// is that of one in flight is refused with an error that names it. When
// the server exits by itself, Serve returns a [*ServerExitError].
//
// The server is started in a process group of its own. When the client
// disconnects, when Serve's context ends or the Proxy is closed (lro-proxy
// on SIGINT or SIGTERM), and when the server exits by itself, the proxy
// ends the whole group before Serve returns: the server's stdin is
// closed, then the group gets SIGTERM and, two seconds later
// ([Config.StopGrace]), SIGKILL, whether or not the server itself has
// exited by then, so a descendant that ignores SIGTERM (a server behind
// npx or uvx, a worker it started) does not outlive the proxy. Not guaranteed: a descendant that left the
// group (setsid, a daemon) is not reached; and a proxy killed with
// SIGKILL ends nothing itself. On Linux the kernel then kills the server
// process the proxy started (PR_SET_PDEATHSIG), but not its descendants,
// which see only their stdin and stdout close (MCP servers exit then);
// elsewhere the server too sees only that.
//
// # What it relays of a remote
//
// The proxy lists the remote's tools and serves them under their names,
// with their input schemas as the remote sent them. It forwards arguments
// untouched, follows the remote's tool list changes and reconnects when
// the remote comes back (calls in between get a clear tool error). Every
// remote tool's large results are offloaded: those of a tool the
// Offloader has a policy for under it, the others as generic records,
// and the output schema each such tool lists is widened to admit the
// descriptor (so that clients validating structured content accept it).
// [Config.MemoryToolsOnly] narrows this to the tools the Offloader has a
// policy for.
//
// It declares to its client the remote's prompts, resources, completions
// and logging as the remote declares them (all four while the remote has
// not been reached yet), and serves the remote's prompts, resources and
// resource templates as the remote lists them, page by page with its
// cursors, forwards prompts/get,
// resources/read and completion/complete, passes the remote's progress
// notifications, log messages and resource updates to the client and the
// client's logging/setLevel to the remote, tells the remote of a call the
// client cancelled or that timed out (notifications/cancelled; on
// protocol 2026-07-28 the end of the call's stream says it), follows the
// remote's list changes, and passes the remote's requests (sampling,
// elicitation, roots) to the client, declaring the three capabilities to
// the remote. It speaks to the remote in its client's protocol
// generation (see [Config.ProtocolVersion]), where a remote's requests
// to the client are what the client takes. When the remote cancels one of its requests, the proxy's
// request to the client ends: a client in the same process sees its
// context end, but a stdio client is not told, as mcp-go's stdio server
// sends no notifications/cancelled of its own requests. The remote's tools are listed to the client whole, in one
// page: the proxy holds them all, bounded by [Config.MaxToolsBytes], to
// route the calls.
//
// With [Proxy.Serve], the remote's prompts, resources, templates,
// completions, reads, tool listing, requests of methods mcp-go does not
// know, and its requests to the client go as JSON, as the remote and the
// client wrote them: mcp-go's types would
// drop what they do not model ("required": false, icons, _meta, the order
// of an elicitation form's fields). A listing the remote lacks ("Method
// not found") is the proxy's own lro:// templates.
//
// It announces itself as a proxy (clientInfo.proxy = true, and the
// experimental capability host.ProxyCapability), to a remote as to a
// Command: in initialize and, on protocol 2026-07-28, which has none, in
// the client info and capabilities of each request's _meta. A server
// built on lro then returns full results instead of offloading them on
// its own disk, and only the proxy offloads.
//
// # What reaches the model besides tool answers
//
// On both paths, what the proxy relays that reaches a model's context
// passes the Offloader's exit gate as a tool answer does: a prompts/get
// result and a resources/read of the server's own resources over the
// bound are offloaded (operations prompt_<name> and resource_read), or
// cut with [Config.MemoryToolsOnly]; the server's sampling/createMessage
// and elicitation/create requests to the client, and those a result
// asking for input carries, are cut with the marker and a notice; an
// elicitation whose requestedSchema or url does not fit is refused with
// a [*TooLargeError] as a JSON-RPC error to the server. What is within
// the bound goes on as it came.
//
// # What it trusts
//
// The server is another party; what follows is said of a remote, and
// holds of a local server too where it applies (the look-alike check, the
// error bound, MaxResponseBytes). The remote is another party. The proxy bounds what it reads of it (the
// limits of [Config]; a call past one gets a tool error that names it, see
// [RemoteLimitError]), keeps only the remote's current tool listing, bounds
// its size ([Config.MaxToolsBytes]) and lists it again at most once a
// second however often the remote announces a change, sends the
// configured headers, the session and the calls to the remote's origin
// only (a redirect to another scheme, host or port is not followed; the
// call gets an error that names it), and never passes on a remote result
// that looks like an offload descriptor as if it were one of its own: a
// result whose text or structured content is a JSON object with an
// "offloaded" field, or with "file_path" and reading instructions
// (line_schema, jq_recipes, guidance), or that links to or embeds an
// lro:// resource, reaches the client as a tool error. The error says that
// the result came from the remote, that the proxy did not write it and
// that the paths and commands in it are not to be used, and quotes the
// remote's content as one JSON string cut at MaxErrorBytes.
//
// # Starting
//
// [New] fails on mistakes in the configuration, naming them: a remote URL
// that is not http:// or https://, or that the remote answers as no MCP
// endpoint does (HTTP 404 for a wrong path, 401 or 403 without the right
// credentials, a web page, plain HTTP at an https:// URL, a TLS certificate
// that cannot be verified). A remote that is merely down (connection
// refused, a timeout, HTTP 5xx) is retried in the background.
package proxy
