package pebblestore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/policy/storetest"
)

func BenchmarkStore(b *testing.B) {
	b.Run("backend=pebble", func(b *testing.B) {
		s, err := Open(b.TempDir(), Options{Availability: storetest.Availability})
		require.NoError(b, err)
		defer s.Close()
		storetest.Bench(b, s)
	})
}
