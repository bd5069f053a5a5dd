package policy_test

import (
	"testing"

	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/storetest"
)

func TestMemStore_Conformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T, avail policy.Availability) policy.Store { return policy.NewMemStore(avail) },
	})
}
