package hooks_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hooks"
)

func TestEnded_Notice_CommandsThatWorkAsPrinted(t *testing.T) {
	chain := uuid.MustParse("0b8f6a1e-3a56-4f54-9d3c-6c1b0f0c2a11")
	head := "ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"
	e := &hooks.Ended{Boundary: governance.ClosedTaskBoundary{ChainID: chain, TaskBoundaryID: uuid.New()}, Head: head, CertifyError: "no gate ran"}
	n := e.Notice(hooks.Sidecar{URL: "http://127.0.0.1:8181", TokenFile: "/home/a b/govhost-data/token"})
	require.Contains(t, n, "no certificate (no gate ran)")
	require.Contains(t, n, "check it: govhost chain export --addr http://127.0.0.1:8181 --token-file '/home/a b/govhost-data/token' --chain "+chain.String()+
		" --out chain-"+chain.String()+".jsonl && govhost chain verify --file chain-"+chain.String()+".jsonl --expected-head "+head)
	// Embedded (no server): the data directory form, and no verify without a head.
	e.Head = ""
	n = e.Notice(hooks.Sidecar{})
	require.Contains(t, n, "check it: govhost chain export --chain "+chain.String()+" --out chain-"+chain.String()+".jsonl")
	require.NotContains(t, n, "chain verify")
}
