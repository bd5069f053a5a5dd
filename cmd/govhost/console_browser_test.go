package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
)

// chromiumPath is Debian's Chromium (`apt-get install chromium`; .ci/run
// installs it).
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium with a fresh profile and nothing
// that phones home, and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx)) // start the browser now
	return ctx
}

// screenshots is where the test writes its pictures of each page
// (GOVHOST_CONSOLE_SCREENSHOTS, or a temporary folder; never committed).
func screenshots(t *testing.T) string {
	if dir := os.Getenv("GOVHOST_CONSOLE_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

func shoot(t *testing.T, ctx context.Context, dir, name string) {
	require.NoError(t, chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	t.Logf("screenshot %s", filepath.Join(dir, name+".png"))
}

// TestConsole_InARealBrowser drives the console of the real serve in
// Chromium: sign in with the printed link, see a held call appear without
// reloading, approve it (the agent's call proceeds), deny another with a
// reason, watch the live decisions, open the task and watch the browser
// verify its chain, then serve it a tampered chain and watch the
// verification fail naming the record.
func TestConsole_InARealBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s: the console's browser test needs Debian's chromium (apt-get install chromium)", chromiumPath)
	}
	s := startServe(t, t.TempDir())
	ctx := browser(t)
	shots := screenshots(t)
	login := ""
	for _, line := range strings.Split(s.stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "console: "); ok {
			login = strings.Fields(rest)[0]
		}
	}
	require.True(t, strings.HasPrefix(login, s.url+"/ui/login?token="), "serve prints the login link: %s", s.stdout)

	// Sign in: the link shows a button; the POST sets the session cookie.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(login), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#approvals")),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="live" and contains(., "live")]`)),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="who" and contains(., "console:")]`)),
	))

	// The in-browser canonical JSON and chain checks pass the shared
	// reference vectors (Python's json.dumps and hashlib).
	canon, err := os.ReadFile("../../console/testdata/canonical.jsonl")
	require.NoError(t, err)
	chain, err := os.ReadFile("../../console/testdata/chain.jsonl")
	require.NoError(t, err)
	failures, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		fmt.Sprintf("GovVerify.checkVectors(%s, %s)", mustQuote(string(canon)), mustQuote(string(chain))), chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Empty(t, failures)

	// A held call appears without a reload; Approve lets it proceed.
	bg := context.Background()
	task, err := s.client.OpenTask(bg, api.OpenTaskRequest{Workspace: t.TempDir()})
	require.NoError(t, err)
	hold := func(command string) api.AuthorizeResult {
		res, err := s.client.Authorize(bg, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{
			Tool: "bash", Arguments: json.RawMessage(`{"command":` + mustQuote(command) + `}`), AgentName: "coder", RunID: "run-42",
		}})
		require.NoError(t, err)
		require.Equal(t, api.DecisionPending, res.Decision)
		return res
	}
	first := hold("curl -fsSL https://example.com/install.sh")
	card := fmt.Sprintf(`.approval[data-approval-id=%q]`, first.ApprovalID)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(card)),
		chromedp.WaitVisible(chromedp.Search(`//pre[contains(., "install.sh")]`)),
	))
	shoot(t, ctx, shots, "approvals")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(card+" button.approve"))))
	res, err := s.client.Wait(bg, first.AuthorizationID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision, "the agent's call proceeds")
	require.NoError(t, s.client.Complete(bg, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(card))))

	// Deny another, with a reason the agent is shown.
	second := hold("terraform destroy -auto-approve")
	card = fmt.Sprintf(`.approval[data-approval-id=%q]`, second.ApprovalID)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(card)),
		chromedp.SendKeys(chromedp.CSS(card+" input.reason"), "not during the freeze"),
		chromedp.Click(chromedp.CSS(card+" button.deny")),
	))
	res, err = s.client.Wait(bg, second.AuthorizationID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	require.Equal(t, "not during the freeze", res.Denial.Message)

	// A hard deny and an allow on the live decisions page, filtered.
	_, err = s.client.Authorize(bg, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: json.RawMessage(`{"command":"rm -rf /"}`), AgentName: "coder"}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/ui/#decisions"),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="live" and contains(., "live")]`)),
	))
	allowed, err := s.client.Authorize(bg, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Operation: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`), AgentName: "reviewer"}})
	require.NoError(t, err)
	require.NoError(t, s.client.Complete(bg, task.TaskID, api.CompleteRequest{PermitID: allowed.Permit.PermitID}))
	secret, err := s.client.Authorize(bg, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Operation: "read_file", Arguments: json.RawMessage(`{"path":"/root/.ssh/id_ed25519"}`), AgentName: "coder", RunID: "run-42"}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, secret.Decision)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#decision-rows tr[data-verdict="allow"]`)),
		chromedp.WaitVisible(chromedp.Search(`//tr[@data-verdict="deny"]/td[contains(., "destructive")]`)),
	))
	shoot(t, ctx, shots, "decisions")
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#f-verdict"), "deny")))
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementById("filters").dispatchEvent(new Event("input")); document.querySelectorAll("#decision-rows tr[data-verdict=allow]").length`))
	require.NoError(t, err)
	require.Zero(t, shown, "the verdict filter hides allows")

	// Close and certify the task, then verify its chain in the browser.
	closed, err := s.client.CloseTask(bg, task.TaskID)
	require.NoError(t, err)
	cert, err := s.client.Mint(bg, task.ChainID, closed.Head)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/ui/#tasks"),
		chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//td[contains(., %q)]`, cert.Certificate.CertificateID.String()))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="#task/%s"]`, task.TaskID))),
		chromedp.WaitVisible(chromedp.CSS(`#verdict[data-valid="true"]`)),
	))
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verdict")))
	require.NoError(t, err)
	require.Contains(t, verdict, "Verified in this browser")
	require.Contains(t, verdict, "certificate "+cert.Certificate.CertificateID.String())

	// The signed checkpoint of the head, checked in the browser (Ed25519
	// in WebCrypto) with the verifier key `govhost key show` prints; a key
	// it was not signed with fails.
	kr, err := govhost.OpenKeyring(s.data)
	require.NoError(t, err)
	vkey, err := kr.VerifierKey()
	require.NoError(t, err)
	other, err := govhost.OpenKeyring(t.TempDir())
	require.NoError(t, err)
	otherKey, err := other.VerifierKey()
	require.NoError(t, err)
	checkpoint := func(key string) (valid bool, text string) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#vkey"), key),
			chromedp.Click(chromedp.CSS("#check-checkpoint")),
			chromedp.WaitVisible(chromedp.CSS(`#checkpoint-verdict[data-valid]`)),
		))
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#checkpoint-verdict")))
		require.NoError(t, err)
		return strings.HasPrefix(text, "Checkpoint verified"), text
	}
	valid, text := checkpoint(otherKey)
	require.False(t, valid, text)
	require.Contains(t, text, "no signature by the key")
	valid, text = checkpoint(vkey)
	require.True(t, valid, text)
	shoot(t, ctx, shots, "task-verified")

	// Serve the page a tampered chain: one record's payload says allow
	// where the store says deny. The browser names that record.
	var exported strings.Builder
	require.NoError(t, s.client.ExportChain(bg, task.ChainID, &exported))
	lines := strings.Split(strings.TrimSpace(exported.String()), "\n")
	victim := -1
	for i, l := range lines {
		if strings.Contains(l, `\"approval\":\"rejected\"`) {
			victim = i
			break
		}
	}
	require.GreaterOrEqual(t, victim, 0, "the denied approval is in the chain")
	var rec struct {
		RecordID string `json:"record_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[victim]), &rec))
	tampered := strings.Replace(lines[victim], `\"approval\":\"rejected\"`, `\"approval\":\"approved\"`, 1)
	lines[victim] = tampered
	forged := []byte(strings.Join(lines, "\n") + "\n")
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		paused, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() { // NB: a listener must not block the event loop
			_, _ = chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
				RequestID: paused.RequestID, ResponseCode: 200, Body: forged,
				ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/x-ndjson"}},
			})
		}()
	}))
	_, err = chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/ui/api/chains/*", RequestStage: fetch.RequestStageRequest}}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#verdict[data-valid="false"]`)),
	))
	verdict, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verdict")))
	require.NoError(t, err)
	require.Contains(t, verdict, "FAILED at record "+rec.RecordID)
	require.Contains(t, verdict, "CONTENT_MISMATCH")
	shoot(t, ctx, shots, "task-tampered")
	_, err = chromedp.Call(ctx, fetch.Disable, struct{}{})
	require.NoError(t, err)

	// The governing policy: bindings in order, module digests, ABI, pools.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/ui/#policy"),
		chromedp.WaitVisible(chromedp.Search(`//tr[@class="binding"]/td[contains(., "destructive")]`)),
		chromedp.WaitVisible(chromedp.Search(`//tr[@class="binding"]/td[contains(., "native")]`)),
	))
	shoot(t, ctx, shots, "policy")
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
