package governance_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func TestParseArguments_CanonicalOnceKeepingOrder(t *testing.T) {
	args, err := governance.ParseArguments(json.RawMessage(`{"path":"a.txt","n":1.50,"b":true}`))
	require.NoError(t, err)
	require.Equal(t, []string{"path", "n", "b"}, args.Order)
	require.Equal(t, `{"b":true,"n":1.50,"path":"a.txt"}`, string(args.Canonical))
	require.Equal(t, governance.SHA256Hex(args.Canonical), args.Digest)
	require.Equal(t, []string{"b", "n", "path"}, args.FieldNames())
	plain, err := args.ForCallable()
	require.NoError(t, err)
	require.Equal(t, 1.5, plain["n"])
}

func TestParseArguments_EmptyIsEmptyObject(t *testing.T) {
	args, err := governance.ParseArguments(nil)
	require.NoError(t, err)
	require.Equal(t, "{}", string(args.Canonical))
}

func TestParseArguments_RefusesNonObjects(t *testing.T) {
	for _, raw := range []string{`[1]`, `"x"`, `null`} {
		_, err := governance.ParseArguments(json.RawMessage(raw))
		require.ErrorIs(t, err, governance.ErrArgumentsNotObject, raw)
	}
	_, err := governance.ParseArguments(json.RawMessage(`{"a":`))
	require.Error(t, err)
	require.NotErrorIs(t, err, governance.ErrArgumentsNotObject)
}

func TestArguments_WithReplacementKeepsOrderAppendsNewSorted(t *testing.T) {
	args, err := governance.ParseArguments(json.RawMessage(`{"z":1,"a":2}`))
	require.NoError(t, err)
	next, err := args.WithReplacement(json.RawMessage(`{"a":3,"y":0,"x":0}`))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "x", "y"}, next.Order)
	_, err = args.WithReplacement(json.RawMessage(`[]`))
	require.ErrorIs(t, err, governance.ErrArgumentsNotObject)
}
