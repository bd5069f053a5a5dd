package policy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// Every sentinel still matches, and every struct is still found, after
// wrapping.
func TestErrors_WrappedStillMatch(t *testing.T) {
	cause := &governance.ValidationError{Field: "digest", Reason: "mismatch"}
	cases := []struct {
		err      error
		sentinel error
		target   any
	}{
		{&policy.ActivationError{Field: "gate_bindings[0].gate_id"}, policy.ErrActivation, new(*policy.ActivationError)},
		{&policy.NotActiveError{Field: "policy_version"}, policy.ErrNotActive, new(*policy.NotActiveError)},
		{&policy.BindingConflictError{BindingID: "b"}, policy.ErrBindingConflict, new(*policy.BindingConflictError)},
		{&policy.IntegrityError{Field: "digest", Err: cause}, policy.ErrIntegrity, new(*policy.IntegrityError)},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("context: %w", c.err)
		require.ErrorIs(t, wrapped, c.sentinel)
		require.ErrorAs(t, wrapped, c.target)
		require.NotEmpty(t, c.err.Error())
		for _, other := range []error{policy.ErrActivation, policy.ErrNotActive, policy.ErrBindingConflict, policy.ErrIntegrity} {
			if other != c.sentinel {
				require.False(t, errors.Is(wrapped, other), "%v is not %v", c.err, other)
			}
		}
	}
	// An integrity error exposes its decoding cause.
	err := fmt.Errorf("x: %w", &policy.IntegrityError{Field: "digest", Err: cause})
	require.ErrorIs(t, err, governance.ErrInvalid)
}
