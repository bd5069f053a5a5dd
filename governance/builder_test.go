package governance

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestNewRecordID_IsARandomVersion4UUID(t *testing.T) {
	seen := map[uuid.UUID]bool{}
	for range 1000 {
		id := newRecordID()
		require.Equal(t, uuid.Version(4), id.Version())
		require.Equal(t, uuid.RFC4122, id.Variant())
		require.False(t, seen[id])
		seen[id] = true
	}
}
