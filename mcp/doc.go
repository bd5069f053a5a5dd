// Package mcp owns govhost's MCP proxy: the relay that sits between an MCP
// client and an upstream MCP server (stdio: the server as a child process;
// streamable HTTP: an intermediary) and governs every tools/call as a
// govhost operation, and the mapping of MCP tools onto govhost's operation
// vocabulary and path-carrying arguments.
//
// The relay forwards every message it does not govern byte for byte
// (requests, notifications, responses, batches, unknown methods, progress,
// cancellation); it reads only the envelope. A tools/call is authorized
// first (Governor: the embedded controller or a running sidecar): a denial
// is answered with a tool result that has isError and the gate's
// model-facing message, and the upstream never sees the call; an allowed
// call is forwarded and its response completes the permit (result digest;
// isError or a JSON-RPC error as failed). One client session is one task,
// closed and certified when the session ends. Both transports govern
// through the same code (gate.go): the stdio relay (relay.go) and the
// Streamable HTTP intermediary (http.go), which also validates Origin,
// authenticates its clients with its own token, never passes their
// credentials upstream, and checks the request metadata headers
// (Mcp-Method, Mcp-Name, MCP-Protocol-Version) against the body.
//
// Tool ids are "<server name>/<tool name>". A tool's operation and path
// arguments come from the mapping file, the built-in mapping for the
// upstream (server-filesystem ships), or the tool's annotations; an
// unmapped tool is still governed by its id.
//
// This is a framework boundary like the rest of govhost: it governs what
// passes through it; a client that reaches the server another way is not
// governed.
package mcp
