package pebblestore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func init() {
	// fatal: append to $CHAIN, ack on fd 3, then make a MANIFEST sync fail
	// under a flush: Pebble calls Logger.Fatalf.
	children["fatal"] = func() error {
		inj := &injector{pred: func(op errorfs.Op) error {
			if isSync(op.Kind) && strings.Contains(op.Path, "MANIFEST") {
				return errorfs.ErrInjected
			}
			return nil
		}}
		s, err := Open(os.Getenv("DIR"), Options{
			FS: errorfs.Wrap(vfs.Default, inj), BallastSize: -1,
			OnFatal: func(fe *FatalError) { fmt.Fprintln(os.Stderr, "OnFatal hook ran:", fe.Dir) },
		})
		if err != nil {
			return err
		}
		acks := os.NewFile(3, "acks")
		chain := uuid.MustParse(os.Getenv("CHAIN"))
		head := governance.EmptyHead
		for range 20 {
			r, err := governance.NextRecord(head, governance.RecordSpec{
				Type: governance.PolicyBound, ChainID: chain, PolicyID: chain, PolicyVersion: "1",
			})
			if err != nil {
				return err
			}
			if _, err := s.Append(context.Background(), r); err != nil {
				return err
			}
			fmt.Fprintf(acks, "%s %d %s\n", chain, r.Sequence, r.ChainHash)
			head = r.Head()
		}
		inj.on.Store(true)
		_ = s.db.Flush()
		return fmt.Errorf("flush returned: the fatal path did not stop the process")
	}
}

// TestStore_FatalPebbleErrorStopsVisibly: when Pebble reports a fatal error
// the process stops with the FatalError on stderr (after OnFatal ran), not
// silently, and a restart recovers every acknowledged record.
func TestStore_FatalPebbleErrorStopsVisibly(t *testing.T) {
	dir := t.TempDir()
	chain := uuid.New()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := childCommand("fatal", "DIR="+dir, "CHAIN="+chain.String(), "GORACE=atexit_sleep_ms=0")
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	require.NoError(t, w.Close())
	acked := map[uuid.UUID]map[int64]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		record(t, acked, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode(), "a Go panic: %s", stderr.String())
	out := stderr.String()
	require.Contains(t, out, "OnFatal hook ran: "+dir)
	require.Contains(t, out, "panic: pebblestore: fatal storage error in "+dir)
	require.Contains(t, out, "MANIFEST")
	require.Contains(t, out, "restart to recover every acknowledged record")
	require.Len(t, acked[chain], 20)
	verifyAfterCrash(t, 0, dir, acked)
}
