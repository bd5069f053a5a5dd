package policy_test

import (
	"testing"

	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/storetest"
)

func BenchmarkStore(b *testing.B) {
	b.Run("backend=memory", func(b *testing.B) {
		storetest.Bench(b, policy.NewMemStore(storetest.Availability))
	})
}
