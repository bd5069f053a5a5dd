package pebblestore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// crashRoundsEnv sets the number of kill rounds (default 50, what CI runs).
// A soak: GOVHOST_CRASH_ROUNDS=1000 go test -run TestStore_Crash ./evidence/pebblestore
const crashRoundsEnv = "GOVHOST_CRASH_ROUNDS"

func init() {
	children["crash"] = crashChild
}

// crashChild appends to every chain in $CHAINS concurrently, forever, and
// reports each acknowledged record on fd 3 as "chain seq hash" lines, one
// write per append (atomic on a pipe). The parent kills it with SIGKILL.
func crashChild() error {
	s, err := Open(os.Getenv("DIR"), Options{BallastSize: 256 << 10})
	if err != nil {
		return err
	}
	acks := os.NewFile(3, "acks")
	var mu sync.Mutex
	errs := make(chan error, 1)
	for i, c := range strings.Split(os.Getenv("CHAINS"), ",") {
		chain := uuid.MustParse(c)
		go func() {
			errs <- crashWriter(s, chain, uint64(i), acks, &mu)
		}()
	}
	return <-errs
}

func crashWriter(s *Store, chain uuid.UUID, seed uint64, acks *os.File, mu *sync.Mutex) error {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	head, err := s.Head(ctx, chain)
	if err != nil {
		return err
	}
	for {
		// One in four appends is an atomic pair (POLICY_BOUND +
		// OPERATION_STARTED style); payload sizes vary up to a few KiB so
		// batches straddle WAL blocks.
		n := 1
		if rng.IntN(4) == 0 {
			n = 2
		}
		batch := make([]governance.EvidenceRecord, 0, n)
		h := head
		for range n {
			r, err := governance.NextRecord(h, governance.RecordSpec{
				Type: governance.GateEvaluated, ChainID: chain, PolicyID: chain, PolicyVersion: "1",
				Payload: map[string]any{"pad": strings.Repeat("x", rng.IntN(4096))},
			})
			if err != nil {
				return err
			}
			batch = append(batch, r)
			h = r.Head()
		}
		rcs, err := evidence.AppendAll(ctx, s, batch)
		if err != nil {
			return fmt.Errorf("chain %s: %w", chain, err)
		}
		var line strings.Builder
		for _, rc := range rcs {
			fmt.Fprintf(&line, "%s %d %s\n", rc.ChainID, rc.Sequence, rc.HeadHash)
		}
		mu.Lock()
		_, err = acks.WriteString(line.String())
		mu.Unlock()
		if err != nil {
			return err
		}
		head = h
	}
}

// TestStore_Crash kills a child process appending to many chains with
// SIGKILL at random moments, then reopens: every chain verifies against
// its persisted head, and every record whose Append had returned is there
// with the acknowledged hash.
func TestStore_Crash(t *testing.T) {
	rounds := 50
	if v := os.Getenv(crashRoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		rounds = n
	}
	crashRounds(t, 8, rounds)
}

// TestStore_Crash_GroupCommit is TestStore_Crash with 64 appenders, one
// per chain, as 64 governed tasks: most WAL syncs carry the batches of
// many chains (group commit), and a kill lands between a group's write
// and its sync, or during the sync, as often as anywhere else.
func TestStore_Crash_GroupCommit(t *testing.T) {
	crashRounds(t, groupAppenders, 12)
}

func crashRounds(t *testing.T, appenders, rounds int) {
	dir := t.TempDir()
	chains := make([]string, appenders)
	for i := range chains {
		chains[i] = uuid.NewString()
	}
	acked := map[uuid.UUID]map[int64]string{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	total := 0
	var inChild, inVerify time.Duration
	for round := range rounds {
		t0 := time.Now()
		n := crashRound(t, dir, chains, acked, rng)
		t1 := time.Now()
		total += n
		verifyAfterCrash(t, round, dir, acked)
		inChild, inVerify = inChild+t1.Sub(t0), inVerify+time.Since(t1)
	}
	t.Logf("time in child rounds %v, in verification %v", inChild, inVerify)
	t.Logf("%d appenders, %d rounds, %d acknowledged appends, all present after every kill", appenders, rounds, total)
}

// crashRound runs the child and kills it; it returns how many acks it read.
func crashRound(t *testing.T, dir string, chains []string, acked map[uuid.UUID]map[int64]string, rng *rand.Rand) int {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := childCommand("crash", "DIR="+dir, "CHAINS="+strings.Join(chains, ","))
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	require.NoError(t, w.Close())

	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// Most rounds kill mid-stream, after some acks; some kill early,
	// possibly during Open and WAL recovery.
	var first <-chan string = lines
	if rng.IntN(5) == 0 {
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
	} else {
		select {
		case l, ok := <-first:
			if ok {
				record(t, acked, l)
			}

		case <-time.After(30 * time.Second):
			t.Fatalf("child made no progress: %s", stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "child died on its own: %s", stderr.String())
	n := 1
	for l := range lines {
		record(t, acked, l)
		n++
	}
	require.NoError(t, r.Close())
	return n
}

func record(t *testing.T, acked map[uuid.UUID]map[int64]string, line string) {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 3, "ack line %q", line)
	chain := uuid.MustParse(f[0])
	seq, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	if acked[chain] == nil {
		acked[chain] = map[int64]string{}
	}
	acked[chain][seq] = f[2]
}

func verifyAfterCrash(t *testing.T, round int, dir string, acked map[uuid.UUID]map[int64]string) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(dir, Options{BallastSize: 256 << 10})
	require.NoError(t, err, "round %d: reopen", round)
	defer func() { require.NoError(t, s.Close()) }()
	for chain, seqs := range acked {
		head, err := s.Head(ctx, chain)
		require.NoError(t, err)
		recs, err := s.Read(ctx, chain, -1)
		require.NoError(t, err)
		require.Len(t, recs, int(head.Sequence+1), "round %d chain %s: persisted head and records agree", round, chain)
		for seq, hash := range seqs {
			require.Less(t, seq, int64(len(recs)), "round %d chain %s: acknowledged seq %d lost (head %d)", round, chain, seq, head.Sequence)
			require.Equal(t, hash, recs[seq].ChainHash, "round %d chain %s seq %d", round, chain, seq)
		}
		res, err := s.Verify(ctx, chain, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid, "round %d chain %s: %+v", round, chain, res)
		if len(recs) > 0 {
			require.Equal(t, recs[len(recs)-1].Head(), head)
		}
	}
}
