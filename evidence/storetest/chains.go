package storetest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// RunChainLister checks evidence.ChainLister on a backend that offers it:
// every chain with a record listed once, in ascending byte order, paged;
// a chain whose only append was refused is not a chain.
func RunChainLister(t *testing.T, h Harness) {
	s := h.New(t)
	l, ok := s.(evidence.ChainLister)
	require.True(t, ok, "the store implements evidence.ChainLister")
	ctx := context.Background()

	empty, err := l.Chains(ctx, uuid.Nil, 10)
	require.NoError(t, err)
	require.Empty(t, empty)

	want := map[uuid.UUID]bool{}
	for i := 0; i < 7; i++ {
		c, _ := Fill(t, s, 1+i%2)
		want[c] = true
	}
	refused := Next(t, governance.ChainHead{Sequence: 0, Hash: strings.Repeat("a", 64)}, uuid.New()) // not a genesis record
	_, err = s.Append(ctx, refused)
	require.Error(t, err)

	got := map[uuid.UUID]bool{}
	after := uuid.Nil
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		page, err := l.Chains(ctx, after, 3)
		require.NoError(t, err)
		for i, id := range page {
			require.False(t, got[id], "chain %s listed twice", id)
			if i > 0 {
				require.Negative(t, bytes.Compare(page[i-1][:], id[:]), "ascending order")
			}
			got[id] = true
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1]
	}
	require.Equal(t, want, got)

	none, err := l.Chains(ctx, uuid.Nil, 0)
	require.NoError(t, err)
	require.Empty(t, none)
}
