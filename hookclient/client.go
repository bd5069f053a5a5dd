// Package hookclient is the command hook: it reads one agent hook input on
// stdin, asks the govhost sidecar in one loopback round trip, and prints
// the agent's own answer with the agent's exit status. On any failure —
// sidecar down, timeout, refused token, bad answer, unreadable input — it
// blocks the tool call with a message that says the gate is unavailable,
// never that the policy denied it. `govhost hook` and the small
// `govhost-hook` binary both run it; it imports no store and no Wasm
// runtime, so it starts fast.
package hookclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/api"
)

// Defaults of the command hook.
const (
	// DefaultURL is the sidecar's loopback address.
	DefaultURL = "http://127.0.0.1:8181"
	// DefaultTimeout bounds the round trip. It must stay below the agent's
	// own hook timeout: an agent that kills a hook lets the tool run.
	DefaultTimeout = 55 * time.Second
)

// Options configure one run.
type Options struct {
	Agent agents.Agent
	// Event names the event for payloads without one (Copilot camelCase).
	Event string
	// URL is the sidecar's base URL; default DefaultURL.
	URL string
	// Token is the sidecar's bearer token ("" sends none).
	Token   string
	Timeout time.Duration
	// Client is the HTTP client; default a fresh one without proxies.
	Client *http.Client
}

// Run answers one hook event and returns the process exit status.
func Run(ctx context.Context, opt Options, stdin io.Reader, stdout, stderr io.Writer) int {
	d, err := agents.Lookup(opt.Agent)
	if err != nil {
		fmt.Fprintf(stderr, "govhost hook: %v; the tool call is blocked\n", err)
		return 2
	}
	a := answer(ctx, d, opt, stdin)
	if len(a.Body) > 0 {
		stdout.Write(a.Body)
		io.WriteString(stdout, "\n")
	}
	if a.Stderr != "" {
		io.WriteString(stderr, strings.TrimRight(a.Stderr, "\n")+"\n")
	}
	return a.Exit
}

func answer(ctx context.Context, d *agents.Dialect, opt Options, stdin io.Reader) agents.Answer {
	body, err := io.ReadAll(io.LimitReader(stdin, api.MaxHookBody+1))
	if err != nil {
		return d.Unavailable(preTool(d, opt.Event), err.Error())
	}
	if len(body) > api.MaxHookBody {
		return d.Unavailable(preTool(d, opt.Event), api.HookTooLargeMessage)
	}
	// Peek, not Decode: the sidecar decodes the arguments, once; here
	// only the event is named (and a malformed input blocked unsent).
	ev, err := d.Peek(opt.Event, body)
	if err != nil {
		// Unreadable input: nothing tells what the event was, so it is
		// blocked as a tool call would be.
		return d.Unavailable(preTool(d, opt.Event), "the hook input could not be read: "+err.Error())
	}
	env, err := roundTrip(ctx, opt, ev, body)
	if err != nil {
		return d.Unavailable(ev, err.Error())
	}
	a := agents.Answer{Exit: env.Exit, Stderr: env.Stderr}
	if !isNull(env.Body) {
		a.Body = env.Body
	}
	return a
}

// preTool stands for an event that could not be read.
func preTool(d *agents.Dialect, event string) agents.Event {
	if event == "" {
		event = d.PreToolEvent()
	}
	return agents.Event{Agent: d.Agent, Name: event, Kind: agents.KindPreTool}
}

// roundTrip is the one loopback request: the sidecar answers the command
// hook's envelope.
func roundTrip(ctx context.Context, opt Options, ev agents.Event, body []byte) (api.HookEnvelope, error) {
	base := opt.URL
	if base == "" {
		base = DefaultURL
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := url.Values{"format": {api.HookCommandFormat}}
	if ev.Name != "" {
		q.Set("event", ev.Name)
	}
	u := strings.TrimRight(base, "/") + "/v1/hooks/" + url.PathEscape(string(ev.Agent)) + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return api.HookEnvelope{}, fmt.Errorf("bad sidecar URL %q: %v", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+opt.Token)
	}
	client := opt.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return api.HookEnvelope{}, fmt.Errorf("the sidecar at %s did not answer within %s", base, timeout)
		}
		return api.HookEnvelope{}, fmt.Errorf("the sidecar at %s cannot be reached: %v", base, rootCause(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return api.HookEnvelope{}, fmt.Errorf("the sidecar's answer was cut off: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb api.ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
			return api.HookEnvelope{}, fmt.Errorf("the sidecar refused the request (%d %s: %s)", resp.StatusCode, eb.Error.Code, eb.Error.Message)
		}
		return api.HookEnvelope{}, fmt.Errorf("the sidecar answered HTTP %d", resp.StatusCode)
	}
	var env api.HookEnvelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return api.HookEnvelope{}, fmt.Errorf("the sidecar's answer is not a hook envelope: %v", err)
	}
	if !isNull(env.Body) && !isObject(env.Body) {
		return api.HookEnvelope{}, errors.New("the sidecar's answer body is not a JSON object")
	}
	if env.Exit < 0 || env.Exit > 2 {
		return api.HookEnvelope{}, fmt.Errorf("the sidecar's answer has exit status %d", env.Exit)
	}
	return env, nil
}

func isNull(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) == 0 || string(t) == "null"
}

func isObject(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// rootCause is the innermost error's text ("connection refused").
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
