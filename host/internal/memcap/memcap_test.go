package memcap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllocator_CapsAndRecords(t *testing.T) {
	var tr Tracker
	m := Allocator(4*65536, &tr).Allocate(0, 1<<32)
	b := m.Reallocate(65536)
	require.Len(t, b, 65536)
	b[10] = 7
	b = m.Reallocate(3 * 65536)
	require.Len(t, b, 3*65536)
	require.Equal(t, byte(7), b[10], "contents survive growth")
	require.False(t, tr.Hit())
	require.Nil(t, m.Reallocate(5*65536))
	require.True(t, tr.Hit())
	tr.Reset()
	require.False(t, tr.Hit())
	require.Len(t, m.Reallocate(4*65536), 4*65536, "exactly the cap is allowed")
	m.Free()
}
