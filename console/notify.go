package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/govhost/govhost/api"
)

// maxNotifyInFlight bounds the webhook posts under way; beyond it a
// notification is dropped (and logged) rather than queued without end.
const maxNotifyInFlight = 8

// Notification is the generic JSON body posted for a pending approval:
// what is held, and the signed links that answer it. Argument values are
// never sent (they stay on this host); the confirmation page behind each
// link shows them while the call is held.
type Notification struct {
	Event      string    `json:"event"` // "approval.pending"
	ApprovalID string    `json:"approval_id"`
	Tool       string    `json:"tool"`
	Operation  string    `json:"operation,omitempty"`
	Action     string    `json:"action,omitempty"`
	Paths      []string  `json:"paths,omitempty"`
	GateID     string    `json:"gate_id"`
	ReasonCode string    `json:"reason_code"`
	Rule       string    `json:"matched_rule,omitempty"`
	Message    string    `json:"message,omitempty"`
	Agent      string    `json:"agent_name,omitempty"`
	RunID      string    `json:"run_id,omitempty"`
	Digest     string    `json:"argument_digest"`
	Since      time.Time `json:"since"`
	ApproveURL string    `json:"approve_url"`
	DenyURL    string    `json:"deny_url"`
	ExpiresAt  time.Time `json:"expires_at"`
	ConsoleURL string    `json:"console_url"`
}

// notifyLoop posts each approval that pending says is new. (Generic only
// so that the console names no controller type: it sees the service.)
func notifyLoop[E any](c *Console, events <-chan E, pending func(E) (api.Approval, bool)) {
	slots := make(chan struct{}, maxNotifyInFlight)
	for {
		select {
		case <-c.stop.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			a, ok := pending(ev)
			if !ok {
				continue
			}
			n := c.notification(a)
			select {
			case slots <- struct{}{}:
				c.wg.Add(1)
				go func() {
					defer c.wg.Done()
					defer func() { <-slots }()
					c.post(n)
				}()
			default:
				c.log.Warn("approval notification dropped: too many posts under way", slog.String("approval_id", n.ApprovalID))
			}
		}
	}
}

// notification signs the approve and deny links of a pending approval.
func (c *Console) notification(a api.Approval) Notification {
	approve := c.links.sign(a.ApprovalID, a.ArgumentDigest, "allow", c.cfg.LinkTTL)
	deny := c.links.sign(a.ApprovalID, a.ArgumentDigest, "deny", c.cfg.LinkTTL)
	n := Notification{
		Event: "approval.pending", ApprovalID: a.ApprovalID, Tool: a.Tool, Operation: a.Operation, Action: a.Action,
		GateID: a.GateID, ReasonCode: a.ReasonCode, Rule: a.MatchedRule, Message: a.Message, Agent: a.AgentName, RunID: a.RunID,
		Digest: a.ArgumentDigest, Since: a.Since, ApproveURL: c.linkURL(approve), DenyURL: c.linkURL(deny), ExpiresAt: approve.Expires,
		ConsoleURL: c.base.JoinPath("/ui/").String(),
	}
	for _, f := range a.PathFacts {
		n.Paths = append(n.Paths, f.Resolved)
	}
	return n
}

func (c *Console) linkURL(l link) string {
	return c.base.JoinPath("/ui/link").String() + "?" + l.query().Encode()
}

// slackBody is a Slack incoming-webhook message: mrkdwn text with the two
// links (Slack renders <url|label>).
func slackBody(n Notification) map[string]string {
	var b strings.Builder
	fmt.Fprintf(&b, "*govhost: approval needed* (%s)\n", n.ApprovalID)
	fmt.Fprintf(&b, "`%s`", n.Tool)
	if n.Operation != "" {
		fmt.Fprintf(&b, " %s", n.Operation)
	}
	if len(n.Paths) > 0 {
		fmt.Fprintf(&b, " on `%s`", strings.Join(n.Paths, "`, `"))
	}
	fmt.Fprintf(&b, "\nasked by gate `%s` (%s)", n.GateID, n.ReasonCode)
	if n.Agent != "" {
		fmt.Fprintf(&b, " for agent %s", n.Agent)
	}
	fmt.Fprintf(&b, "\narguments sha256 `%.12s…`\n<%s|Approve> · <%s|Deny> (links expire %s, each works once)",
		n.Digest, n.ApproveURL, n.DenyURL, n.ExpiresAt.UTC().Format("15:04 MST"))
	return map[string]string{"text": b.String()}
}

func (c *Console) post(n Notification) {
	var body any = n
	if c.cfg.NotifyFormat == "slack" {
		body = slackBody(n)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.stop, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.NotifyURL, bytes.NewReader(data))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		c.log.Warn("approval notification failed", slog.String("approval_id", n.ApprovalID), slog.Any("err", err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		c.log.Warn("approval notification refused", slog.String("approval_id", n.ApprovalID), slog.Int("status", resp.StatusCode))
	}
}
