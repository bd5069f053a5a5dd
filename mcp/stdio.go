package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// ShutdownGrace is how long the upstream may take to exit after its input
// closed before it gets SIGTERM, and again before SIGKILL (the MCP stdio
// shutdown sequence).
const ShutdownGrace = 5 * time.Second

// RunCommand runs cmd as the upstream server over stdio: its stdin and
// stdout carry the session, its stderr is whatever cmd.Stderr is (the
// caller passes its own stderr through). It relays until the upstream
// exits and returns the upstream's exit status (128+signal when killed by
// a signal). The session's task is not closed here: call Governor.Close.
func (p *Proxy) RunCommand(ctx context.Context, cmd *exec.Cmd, clientIn io.Reader, clientOut io.Writer) (int, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("mcp: start upstream: %w", err)
	}
	exited := make(chan struct{})
	inputClosed := make(chan struct{}, 1)
	go func() {
		// MCP stdio shutdown: input closed, then SIGTERM, then SIGKILL.
		select {
		case <-inputClosed:
		case <-ctx.Done():
		case <-exited:
			return
		}
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			select {
			case <-exited:
				return
			case <-time.After(ShutdownGrace):
				_ = cmd.Process.Signal(sig)
			}
		}
	}()
	relayErr := p.Relay(ctx, clientIn, clientOut, Upstream{In: in, Out: out, InputClosed: func() {
		inputClosed <- struct{}{}
	}})
	waitErr := cmd.Wait()
	close(exited)
	code := 0
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		return 1, waitErr
	}
	if relayErr != nil && !errors.Is(relayErr, context.Canceled) {
		return code, relayErr
	}
	return code, nil
}

// Session runs one stdio session end to end: the upstream command under
// the proxy, then the task closed and its certificate minted, its location
// printed on stderr. It returns the exit status for the process: the
// upstream's, or 1 when the proxy itself failed.
func (p *Proxy) Session(ctx context.Context, command []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(command) == 0 {
		fmt.Fprintln(stderr, "govhost mcp: no upstream command (govhost mcp [flags] -- COMMAND [ARGS...])")
		return 2
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stderr = stderr
	if p.Cwd != "" {
		cmd.Dir = p.Cwd
	}
	code, err := p.RunCommand(ctx, cmd, stdin, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "govhost mcp:", err)
		if code == 0 {
			code = 1
		}
	}
	where, cerr := p.Governor.Close(context.WithoutCancel(ctx))
	if cerr != nil {
		fmt.Fprintln(stderr, "govhost mcp: session not certified:", cerr)
		if code == 0 {
			code = 1
		}
		return code
	}
	fmt.Fprintln(stderr, "govhost mcp: session closed; certificate:", where)
	return code
}
