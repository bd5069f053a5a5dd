// Package hooks owns the agent-session side of the coding-agent hooks: one
// governed task per agent session (opened on the session's first event,
// with the session's cwd as its workspace; closed and certified at the
// session's end), pre-tool events authorized and post-tool events
// completed through the controller's two-phase call, and every answer in
// the agent's own dialect (package agents). Its HTTP handler serves
// POST /v1/hooks/{agent} — /v1/hooks/claude-code for Claude Code's HTTP
// hook type — and is what `govhost hook` talks to.
//
// It records what the seeds ask and nothing else: a post-tool event
// completes its permit with a digest of the tool's response, never the
// response; a refused event (malformed, unmatched, replayed) appends
// nothing.
//
// A session's task is kept durably (Config.Sessions, the engine's own
// database) from open to close, so after a server restart the session's
// next event continues the same task (controller.ResumeTask): one task,
// one certificate per session, the restart visible on the chain as the
// outcomes it lost.
//
// A require_approval either becomes the agent's own prompt ("ask",
// recorded as an approval delegated to the agent's prompt) or is held on
// the approval broker until a person resolves it ("hold"); agents that
// cannot ask are always held.
package hooks
