package governance

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestNewRecordID_IsARandomVersion4UUID(t *testing.T) {
	seen := map[uuid.UUID]bool{}
	var ids, other recordIDs // several refills of each, interleaved
	for i := range 1000 {
		id := ids.next()
		if i%3 == 0 {
			id = other.next()
		}
		require.Equal(t, uuid.Version(4), id.Version())
		require.Equal(t, uuid.RFC4122, id.Variant())
		require.False(t, seen[id])
		seen[id] = true
	}
}
