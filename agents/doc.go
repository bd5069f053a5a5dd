// Package agents owns the hook dialects of the coding agents govhost
// governs — Claude Code, OpenAI Codex CLI, Gemini CLI, Cursor and GitHub
// Copilot CLI — as data, and the pure translation between a dialect and
// govhost: an agent's hook payload becomes an Event and the governed
// Request(s) it asks for; a verdict becomes the agent's own answer
// (body, exit status, stderr).
//
// Each agent is one Dialect value (claude.go, codex.go, gemini.go,
// cursor.go, copilot.go): the JSON field names it sends, what each of its
// documented events means for govhost (EventSpec), how its tools map onto
// govhost's tool and operation vocabulary (ToolSpec, tools.go), and how it
// reads an answer (AnswerStyle). The mapping is a table, not code: adding
// a tool or an event is adding a row.
//
// The package does no I/O. Facts only the host can know — whether a path
// exists — come in through HostFacts; sessions, permits and the sidecar
// round trip live in the server and the command hook, which call this
// package.
//
// # Why answers differ per agent
//
// The agents read the same verdict differently: Claude Code and Codex read
// hookSpecificOutput.permissionDecision, Gemini CLI a top-level decision,
// Cursor a permission field with separate user and agent messages, Copilot
// CLI a flat permissionDecision. Exit status 2 blocks in Claude Code,
// Codex, Gemini CLI and Cursor; Copilot CLI logs and skips every hook that
// exits non-zero ("they never block agent execution"), so for Copilot a
// block is a deny answer on exit status 0. A command hook that cannot
// reach the sidecar blocks the tool call the same way, with a message that
// says the gate is unavailable — never that the policy denied it.
package agents
