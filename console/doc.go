// Package console is the web console served at /ui on `govhost serve`:
// the approvals waiting for a person (approve or deny, bound to the held
// call's argument digest, used once), the live stream of verdicts, tasks
// and their evidence (re-verified in the browser, not by the server), the
// governing policy, and approval links that travel (a webhook with signed
// approve / deny links). It owns its sign-in: a one-time login link that
// `serve` prints, exchanged for an HttpOnly, SameSite=Strict session
// cookie; every state change also needs the session's CSRF token and a
// same-origin Origin.
//
// # Why plain HTML and a little JavaScript?
//
// The console is a security tool: its code is read by the people who must
// trust it, it must work offline on an air-gapped host, and its
// Content-Security-Policy forbids inline script and every origin but its
// own. A framework would add a build step, a vendored tree nobody reviews
// and an update treadmill for four pages of lists and buttons. So: static
// files embedded with go:embed, one small script per concern (app.js for
// the pages, verify.js for the chain check in WebCrypto), no CDN, no
// build.
//
// The package knows nothing of HTTP routing above /ui: package server
// mounts its Handler as one public row of the route table.
package console
