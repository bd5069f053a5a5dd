// A real Streamable HTTP MCP upstream for govhost's e2e tests, on the
// TypeScript SDK (McpServer + StreamableHTTPServerTransport, one transport
// per session as the SDK's stateful example does). It serves three tools
// over files under ROOT and appends one JSON line per HTTP request it gets
// to LOG (method, the Authorization it saw, the MCP headers, the body), so a
// test can prove what reached it and what did not.
// Usage: node http-upstream.mjs ROOT LOG [json|stateless]
//   json: JSON answers, not SSE; stateless: no sessions (a fresh transport per request)
// Prints "listening http://127.0.0.1:PORT/mcp" on stdout.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const [root, log, mode] = process.argv.slice(2);
const enableJsonResponse = mode === "json";
const stateless = mode === "stateless";

function newServer() {
  const server = new McpServer({ name: "govhost-e2e-http-upstream", version: "1.0.0" });
  const local = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
  server.registerTool("read_note", {
    description: "Read a note",
    inputSchema: { path: z.string() },
    annotations: { ...local, readOnlyHint: true },
  }, async ({ path: p }) => ({ content: [{ type: "text", text: fs.readFileSync(p, "utf8") }] }));
  server.registerTool("write_note", {
    description: "Write a note",
    inputSchema: { path: z.string(), content: z.string() },
    annotations: local,
  }, async ({ path: p, content }) => {
    fs.writeFileSync(p, content);
    return { content: [{ type: "text", text: `wrote ${path.basename(p)}` }] };
  });
  server.registerTool("slow_read", {
    description: "Read a note after a while",
    inputSchema: { path: z.string(), ms: z.number() },
    annotations: { ...local, readOnlyHint: true },
  }, async ({ path: p, ms }, extra) => {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      extra.signal.addEventListener("abort", () => { clearTimeout(t); reject(new Error("cancelled")); });
    });
    return { content: [{ type: "text", text: fs.readFileSync(p, "utf8") }] };
  });
  server.registerTool("unbound_tool", {
    description: "A tool no policy binding names",
    inputSchema: {},
    annotations: { ...local, readOnlyHint: true },
  }, async () => ({ content: [{ type: "text", text: "ran" }] }));
  return server;
}

const transports = {};
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks).toString("utf8");
  let body;
  try { body = raw ? JSON.parse(raw) : undefined; } catch { body = raw; }
  const h = req.headers;
  fs.appendFileSync(log, JSON.stringify({
    http: req.method, authorization: h.authorization ?? null, cookie: h.cookie ?? null, origin: h.origin ?? null,
    session: h["mcp-session-id"] ?? null, version: h["mcp-protocol-version"] ?? null,
    mcp_method: h["mcp-method"] ?? null, mcp_name: h["mcp-name"] ?? null, body,
  }) + "\n");
  if (stateless) {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => transport.close());
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body);
    return;
  }
  const sid = h["mcp-session-id"];
  let transport = sid ? transports[sid] : undefined;
  if (!transport) {
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      res.writeHead(sid ? 404 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no such session" }, id: null }));
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse,
      onsessioninitialized: (id) => { transports[id] = transport; },
    });
    transport.onclose = () => { if (transport.sessionId) delete transports[transport.sessionId]; };
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
