package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
)

// childArgsEnv makes the test binary run govhost with these arguments
// (a JSON array) instead of the tests: a real `govhost serve` process
// without building a binary.
const childArgsEnv = "GOVHOST_TEST_CHILD_ARGS"

// served is a running `govhost serve` child.
type served struct {
	cmd    *exec.Cmd
	url    string
	data   string
	client *client.Client
	stdout *bytes.Buffer // the startup lines, complete once startServe returns
	stderr *lockedBuffer // written by the child's copier while tests read it
	exited chan error
}

// lockedBuffer is a bytes.Buffer safe to read while exec's copier writes
// to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs `govhost serve --data data --addr 127.0.0.1:0` as a child
// process and waits until it is ready.
// serveStartBound is how long a test waits for serve to listen and to be
// ready. The first start of a package run compiles the Go-built built-in
// modules cold into the package's fresh cache: under -race on two shared
// cores that has passed two minutes while other packages' tests ran.
const serveStartBound = 5 * time.Minute

func startServe(t *testing.T, data string, extra ...string) *served {
	t.Helper()
	args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--log-level", "warn"}, extra...)
	cmd := exec.Command(os.Args[0])
	encoded, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(encoded))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &served{cmd: cmd, data: data, stdout: &bytes.Buffer{}, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = s.stderr
	require.NoError(t, cmd.Start())
	urls := make(chan string, 1)
	go func() {
		defer close(urls)
		sc := bufio.NewScanner(out)
		url := ""
		for sc.Scan() {
			line := sc.Text()
			s.stdout.WriteString(line + "\n")
			if rest, ok := strings.CutPrefix(line, "govhost serve: listening on "); ok {
				url = strings.Fields(rest)[0]
			}
			if strings.HasPrefix(line, "try: ") {
				urls <- url // the last startup line
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case u, ok := <-urls:
		require.True(t, ok, "serve exited before listening: %s", s.stderr)
		s.url = u
	case <-time.After(serveStartBound):
		t.Fatalf("serve did not start: %s", s.stderr)
	}
	s.client, err = client.New(s.url, client.TokenFromFile(filepath.Join(data, "token")))
	require.NoError(t, err)
	deadline := time.Now().Add(serveStartBound)
	for s.client.Ready(context.Background()) != nil {
		require.True(t, time.Now().Before(deadline), "serve never became ready: %s", s.stderr)
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// wait returns the child's exit status.
func (s *served) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(time.Minute):
		t.Fatal("serve did not exit")
		return -1
	}
}

func readerCall() api.AuthorizeRequest {
	return api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: []byte(`{"path":"README.md"}`)}}
}

// TestServe_FirstStartTokenGracefulStopAndExportThroughTheServer runs the
// main job as a process: first start (token 0600, default policy, the
// printed curl line), one governed task, chain export through the server
// while the directory is locked, then SIGTERM: exit 0, and the data directory
// opens again with the chain intact.
func TestServe_FirstStartTokenGracefulStopAndExportThroughTheServer(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)
	st, err := os.Stat(filepath.Join(data, "token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Contains(t, s.stdout.String(), "(created now, mode 0600)")
	require.Contains(t, s.stdout.String(), "(installed now)")
	require.Contains(t, s.stdout.String(), "try: curl -s -X POST -H \"Authorization: Bearer $(cat "+filepath.Join(data, "token")+")\" "+s.url+"/v1/tasks")

	task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	res, err := s.client.Authorize(ctx, task.TaskID, readerCall())
	require.NoError(t, err)
	require.NoError(t, s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	closed, err := s.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	cert, err := s.client.Mint(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)

	// The server holds the directory: the export goes through it, found
	// from the address it records there, or named with --addr.
	code, exported, stderr := runCLI(t, "", "chain", "export", "--data", data, "--chain", closed.ChainID.String())
	require.Equal(t, exitOK, code, stderr)
	code, named, stderr := runCLI(t, "", "chain", "export", "--data", data, "--addr", s.url, "--chain", closed.ChainID.String())
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, exported, named)
	code, out, stderr := runCLI(t, exported, "chain", "verify", "--file", "-", "--expected-head", cert.Certificate.EvidenceChainHead)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"valid":true`)

	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s.wait(t), s.stderr.String())
	code, again, stderr := runCLI(t, "", "chain", "export", "--data", data, "--chain", closed.ChainID.String())
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, exported, again)

	// A second start reuses the token and the policy.
	s2 := startServe(t, data)
	require.NotContains(t, s2.stdout.String(), "created now")
	require.Contains(t, s2.stdout.String(), "(already active)")
	require.NoError(t, s2.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s2.wait(t))
}

// TestServe_SIGKILLMidLoadThenRestart kills the server while 16 clients
// authorize and complete, restarts it on the same data directory, and
// checks: every chain verifies, every acknowledged completion is recorded,
// and a permit issued before the crash is refused (permit_unknown).
func TestServe_SIGKILLMidLoadThenRestart(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)

	const clients = 16
	type acked struct {
		chain uuid.UUID
		op    uuid.UUID
	}
	var (
		mu        sync.Mutex
		completed []acked
		chains    = map[uuid.UUID]uuid.UUID{} // task → chain
		pending   []api.PermitInfo            // authorized, never completed
		calls     atomic.Int64
		wg        sync.WaitGroup
	)
	for i := 0; i < clients; i++ {
		task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
		require.NoError(t, err)
		chains[task.TaskID] = task.ChainID
		wg.Add(1)
		go func(task api.TaskInfo, hold bool) {
			defer wg.Done()
			for n := 0; n < 500; n++ {
				res, err := s.client.Authorize(ctx, task.TaskID, readerCall())
				if err != nil {
					return // the server is gone
				}
				if hold && n == 0 {
					mu.Lock()
					pending = append(pending, *res.Permit)
					mu.Unlock()
					continue
				}
				if err := s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}); err != nil {
					return
				}
				mu.Lock()
				completed = append(completed, acked{task.ChainID, res.Permit.OperationID})
				mu.Unlock()
				calls.Add(1)
			}
		}(task, i%4 == 0)
	}
	for calls.Load() < 100 {
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGKILL))
	s.wait(t)
	wg.Wait()
	t.Logf("killed after %d acknowledged round trips", len(completed))

	s2 := startServe(t, data)
	for _, chain := range chains {
		head, err := s2.client.ChainHead(ctx, chain)
		require.NoError(t, err)
		res, err := s2.client.VerifyChain(ctx, chain, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid, "chain %s: %+v", chain, res)
	}
	recorded := map[uuid.UUID]bool{}
	for _, chain := range chains {
		var buf bytes.Buffer
		require.NoError(t, s2.client.ExportChain(ctx, chain, &buf))
		require.NoError(t, evidence.ReadJSONL(&buf, func(r governance.EvidenceRecord) bool {
			if r.RecordType == governance.CallableCompleted {
				recorded[r.OperationID.UUID] = true
			}
			return true
		}))
	}
	for _, a := range completed {
		require.True(t, recorded[a.op], "acknowledged completion of operation %s is on chain %s", a.op, a.chain)
	}
	require.NotEmpty(t, pending)
	for _, p := range pending {
		err := s2.client.Complete(ctx, p.TaskID, api.CompleteRequest{PermitID: p.PermitID})
		var ce *client.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "permit_unknown", ce.Code, "a permit from before the crash is refused: %s", ce.Message)
	}
	require.NoError(t, s2.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s2.wait(t))
}
