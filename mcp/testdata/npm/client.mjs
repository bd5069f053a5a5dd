// A real MCP client for govhost's e2e tests, on the TypeScript SDK.
// Usage: node client.mjs COMMAND [ARGS...]  (the proxy, as a client's mcpServers entry runs it)
//    or: node client.mjs http://HOST:PORT/mcp  (Streamable HTTP; bearer token from $GOVHOST_MCP_TOKEN)
// Steps arrive as JSON lines on stdin; each answer is one JSON line on stdout:
//   {"id":1,"op":"list"}                              -> {"id":1,"tools":[...names]}
//   {"id":2,"op":"call","name":"...","arguments":{}, "abort_ms":50} -> {"id":2,"result":{...}} | {"id":2,"error":{...}}
//   {"id":3,"op":"close"}                             -> {"id":3,"closed":true}
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const [command, ...args] = process.argv.slice(2);
const http = /^https?:\/\//.test(command);
const transport = http
  ? new StreamableHTTPClientTransport(new URL(command), {
      requestInit: { headers: process.env.GOVHOST_MCP_TOKEN ? { Authorization: `Bearer ${process.env.GOVHOST_MCP_TOKEN}` } : {} },
    })
  : new StdioClientTransport({ command, args, stderr: "inherit", env: process.env });
const client = new Client({ name: "govhost-e2e-client", version: "1.0.0" });
transport.onclose = () => {
  out({ event: "closed" });
  setTimeout(() => process.exit(0), 100);
};
try {
  await client.connect(transport);
} catch (e) {
  out({ event: "connect_error", message: String(e?.message ?? e) });
  process.exit(3);
}
out({ event: "connected", server: client.getServerVersion(), session: http ? transport.sessionId ?? null : null });

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  const step = JSON.parse(line);
  try {
    if (step.op === "list") {
      const r = await client.listTools();
      out({ id: step.id, tools: r.tools.map((t) => t.name) });
    } else if (step.op === "call") {
      const opts = { timeout: step.timeout_ms ?? 60000 };
      if (step.abort_ms) {
        const ac = new AbortController();
        setTimeout(() => ac.abort("test cancels"), step.abort_ms);
        opts.signal = ac.signal;
      }
      const r = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
      out({ id: step.id, result: r });
    } else if (step.op === "close") {
      if (http) await transport.terminateSession(); // DELETE: the session ends
      await client.close();
      out({ id: step.id, closed: true });
      process.exit(0);
    }
  } catch (e) {
    out({ id: step.id, error: { message: String(e?.message ?? e), code: e?.code ?? null } });
  }
});
rl.on("close", async () => {
  await client.close();
  process.exit(0);
});
