package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/sse"
	"github.com/govhost/govhost/server/wire"
	"github.com/govhost/govhost/service"
)

// loginPage shows a sign-in button for a login link's token; only the
// POST uses the token, so a link preview that fetches the URL does not
// burn it.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "login.html", map[string]string{"Token": r.URL.Query().Get("token")})
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		c.render(w, http.StatusForbidden, "message.html", message{"Sign-in refused", "The sign-in form must be sent from this console's own page."})
		return
	}
	secret, s, ok := c.gate.redeem(r.PostFormValue("token"))
	if !ok {
		c.render(w, http.StatusUnauthorized, "message.html", message{"This login link does not work",
			"It was already used, has expired, or is not from this server run. Restart serve, or use a fresh link it printed."})
		return
	}
	setSessionCookie(w, r, secret, s.expires)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	c.gate.end(r)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]bool{"signed_out": true})
}

type message struct{ Title, Text string }

// sessionInfo tells the page who it acts as and the CSRF token its state
// changes carry.
func (c *Console) sessionInfo(w http.ResponseWriter, _ *http.Request, s *session) {
	writeJSON(w, http.StatusOK, map[string]any{"approver": "console:" + s.approverID(), "csrf_token": s.csrf, "expires_at": s.expires})
}

func (c *Console) approvals(w http.ResponseWriter, _ *http.Request, _ *session) {
	writeJSON(w, http.StatusOK, api.ApprovalList{Approvals: wire.Approvals(c.svc.PendingApprovalList())})
}

// resolveBody is what the page sends to approve or deny.
type resolveBody struct {
	Decision       string `json:"decision"`
	ArgumentDigest string `json:"argument_digest"`
	Reason         string `json:"reason"`
}

func (c *Console) resolve(w http.ResponseWriter, r *http.Request, s *session) {
	var body resolveBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "body: "+err.Error())
		return
	}
	if body.ArgumentDigest == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "argument_digest is required: an answer is bound to the arguments it was given for")
		return
	}
	id := r.PathValue("approval_id")
	err := c.svc.Resolve(id, resolution(body.Decision, body.ArgumentDigest, body.Reason, governance.ActorRef{Kind: "console", ID: s.approverID()}))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Resolved{ApprovalID: id, Decision: body.Decision})
}

// resolution is a person's answer: allow or deny (anything else stays
// empty, which the service refuses as invalid), bound to a digest.
func resolution(decision, digest, reason string, who governance.ActorRef) service.ApprovalResolution {
	r := service.ApprovalResolution{ArgumentDigest: digest, Reason: trimmed(reason, 500), Approver: &who}
	switch decision {
	case "allow":
		r.Decision = service.Approve
	case "deny":
		r.Decision = service.Reject
	}
	return r
}

// consoleEvent is one event of the console's stream: an approval
// (pending, resolved) or a verdict (decision).
type consoleEvent struct {
	kind string
	data any
}

// events streams approvals and verdicts to the page.
func (c *Console) events(w http.ResponseWriter, r *http.Request, _ *session) {
	decisions, stopDecisions, err := c.svc.DecisionEvents()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	defer stopDecisions()
	approvals, stopApprovals := c.svc.ApprovalEvents()
	defer stopApprovals()
	merged := make(chan consoleEvent)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(merged)
		for approvals != nil || decisions != nil {
			var ev consoleEvent
			select {
			case a, ok := <-approvals:
				if !ok {
					approvals = nil
					continue
				}
				ev = consoleEvent{string(a.Kind), wire.Approval(service.ApprovalOf(a.Approval))}
			case d, ok := <-decisions:
				if !ok {
					// Dropped for falling behind (or shut down): end the
					// stream; the page reconnects and reloads the lists.
					return
				}
				ev = consoleEvent{"decision", wire.DecisionEvent(d)}
			case <-done:
				return
			}
			select {
			case merged <- ev:
			case <-done:
				return
			}
		}
	}()
	sse.Stream(r.Context(), c.stop, w, merged, func(ev consoleEvent) (string, []byte, bool) {
		data, err := json.Marshal(ev.data)
		return ev.kind, data, err == nil
	})
}

func (c *Console) tasks(w http.ResponseWriter, r *http.Request, _ *session) {
	writeJSON(w, http.StatusOK, map[string]any{"tasks": wire.TaskStates(c.svc.Tasks(r.Context()))})
}

func pathUUID(w http.ResponseWriter, r *http.Request, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", name+" is not a UUID")
	}
	return id, err == nil
}

// chain serves a chain's records as JSON Lines, exactly as stored: the
// page recomputes every digest itself.
func (c *Console) chain(w http.ResponseWriter, r *http.Request, _ *session) {
	id, ok := pathUUID(w, r, "chain_id")
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := c.svc.ExportChain(r.Context(), id, &buf); err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	_, _ = w.Write(buf.Bytes())
}

// checkpoint serves a signed checkpoint of the chain's head; the page
// checks its Ed25519 signature with a key the person pastes.
func (c *Console) checkpoint(w http.ResponseWriter, r *http.Request, _ *session) {
	id, ok := pathUUID(w, r, "chain_id")
	if !ok {
		return
	}
	note, err := c.svc.SignCheckpoint(r.Context(), id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(note)
}

func (c *Console) certificate(w http.ResponseWriter, r *http.Request, _ *session) {
	id, ok := pathUUID(w, r, "certificate_id")
	if !ok {
		return
	}
	cert, err := c.svc.CertificateByID(id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.Certificate(cert))
}

func (c *Console) bundle(w http.ResponseWriter, r *http.Request, _ *session) {
	id, ok := pathUUID(w, r, "task_id")
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := c.svc.BundleTar(r.Context(), id, true, &buf); err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", `attachment; filename="task-`+id.String()+`-bundle.tar"`)
	_, _ = w.Write(buf.Bytes())
}

func (c *Console) policy(w http.ResponseWriter, r *http.Request, _ *session) {
	p, err := c.svc.Governing(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.GoverningPolicy(p))
}

// linkView is what the confirmation page of a signed link shows.
type linkView struct {
	Link     link
	Query    map[string]string
	Approval *api.Approval
	Args     string
	Verb     string
	Problem  string
	Expires  string
}

// linkPage shows what a signed link would do, without using it: the held
// call (its argument values, while it is held) and one button.
func (c *Console) linkPage(w http.ResponseWriter, r *http.Request) {
	l := linkOf(r.URL.Query())
	view := linkView{Link: l, Verb: verbOf(l.Decision), Expires: l.Expires.UTC().Format(time.RFC3339), Query: map[string]string{}}
	for k, v := range l.query() {
		view.Query[k] = v[0]
	}
	status := http.StatusOK
	if err := c.links.check(l); err != nil {
		status, view.Problem = linkStatus(err), err.Error()
	} else if a, err := c.svc.PendingApproval(l.ApprovalID); err != nil {
		status, view.Problem = http.StatusConflict, "The call is no longer waiting: it was answered, timed out, or the server restarted."
	} else if a.ArgumentDigest != l.ArgumentDigest {
		status, view.Problem = http.StatusConflict, "The held call's arguments are not the ones this link was made for."
	} else {
		held := wire.Approval(a)
		view.Approval = &held
		var pretty bytes.Buffer
		if json.Indent(&pretty, a.Arguments, "", "  ") == nil {
			view.Args = pretty.String()
		}
	}
	c.render(w, status, "link.html", view)
}

// useLink answers an approval with a signed link, once.
func (c *Console) useLink(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		c.render(w, http.StatusForbidden, "message.html", message{"Refused", "An approval link is confirmed from its own page in this console."})
		return
	}
	if err := r.ParseForm(); err != nil {
		c.render(w, http.StatusBadRequest, "message.html", message{"Refused", err.Error()})
		return
	}
	l := linkOf(r.PostForm)
	if err := c.links.use(l); err != nil {
		c.render(w, linkStatus(err), "message.html", message{"This link does not work", err.Error()})
		return
	}
	err := c.svc.Resolve(l.ApprovalID, resolution(l.Decision, l.ArgumentDigest, r.PostForm.Get("reason"), governance.ActorRef{Kind: "link", ID: l.ApprovalID}))
	if err != nil {
		status := http.StatusInternalServerError
		var se *service.Error
		if errors.As(err, &se) {
			status = statusOf[se.Code]
		}
		c.render(w, status, "message.html", message{"Nothing was decided", err.Error()})
		return
	}
	c.render(w, http.StatusOK, "message.html", message{strings.ToUpper(verbOf(l.Decision)[:1]) + verbOf(l.Decision)[1:] + "d",
		"Approval " + l.ApprovalID + " was answered: " + l.Decision + ", recorded as approver link:" + l.ApprovalID + "."})
}

func verbOf(decision string) string {
	if decision == "allow" {
		return "approve"
	}
	return "deny"
}

func linkStatus(err error) int {
	switch {
	case errors.Is(err, ErrLinkExpired):
		return http.StatusGone
	case errors.Is(err, ErrLinkUsed):
		return http.StatusConflict
	}
	return http.StatusForbidden
}
