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

// FuzzForCallable_SameAsEncodingJSON: the callable's copy of the parsed
// arguments equals what encoding/json decodes from their canonical text,
// error for error.
func FuzzForCallable_SameAsEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"command":"git status","timeout":30}`, `{"n":1.50,"big":1e400}`,
		`{"a":[1,"x",null,true,{"b":[]}],"c":{"d":-0,"e":12345678901234567890}}`, `{"s":"\u00e9\ud83d\ude00\n"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := governance.ParseArguments(raw)
		if err != nil {
			return
		}
		got, gotErr := args.ForCallable()
		var want map[string]any
		wantErr := json.Unmarshal(args.Canonical, &want)
		require.Equal(t, wantErr, gotErr)
		if wantErr != nil {
			want = nil // ForCallable returns no partial result
		}
		require.Equal(t, want, got)
	})
}

func TestForCallable_ACopyOfItsOwn(t *testing.T) {
	args, err := governance.ParseArguments(json.RawMessage(`{"list":[1,{"k":"v"}],"n":2}`))
	require.NoError(t, err)
	plain, err := args.ForCallable()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"list": []any{1.0, map[string]any{"k": "v"}}, "n": 2.0}, plain)
	plain["list"].([]any)[1].(map[string]any)["k"] = "changed"
	plain["n"] = "x"
	again, err := args.ForCallable()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"list": []any{1.0, map[string]any{"k": "v"}}, "n": 2.0}, again)
}
