package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseJSON_KeepsOrderAndLiterals(t *testing.T) {
	v, err := parseJSON([]byte(` {"b": 1, "a": [true, null, 1.50, -0, 1E2], "c": "x\u00e9\ud83d\ude00"} `))
	require.NoError(t, err)
	require.Equal(t, kindObject, v.kind)
	require.Len(t, v.obj, 3)
	require.Equal(t, "b", v.obj[0].key)
	require.Equal(t, "a", v.obj[1].key)
	arr := v.obj[1].val.arr
	require.Equal(t, "1.50", arr[2].s)
	require.Equal(t, "-0", arr[3].s)
	require.Equal(t, "1E2", arr[4].s)
	require.Equal(t, "xé😀", v.obj[2].val.s)
}

func TestParseJSON_DuplicateKeyKeepsFirstPositionLastValue(t *testing.T) {
	v, err := parseJSON([]byte(`{"a": 1, "b": 2, "a": 3}`))
	require.NoError(t, err)
	require.Len(t, v.obj, 2)
	require.Equal(t, "a", v.obj[0].key)
	require.Equal(t, "3", v.obj[0].val.s)
	require.Equal(t, "b", v.obj[1].key)
}

func TestParseJSON_Invalid(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`,
		`"abc`, `"\x"`, `"\u12"`, "\"a\x01\"", `{} {}`, `{"a":1}x`, `'a'`, `+1`, `NaN`,
	} {
		_, err := parseJSON([]byte(in))
		require.Error(t, err, "%q", in)
		require.True(t, errors.Is(err, errJSON), "%q", in)
	}
}

func TestParseJSON_SurrogatesAndInvalidUTF8(t *testing.T) {
	v, err := parseJSON([]byte(`"\ud800x\udc00\ud800\ud800"`))
	require.NoError(t, err)
	require.Equal(t, "\ufffdx\ufffd\ufffd\ufffd", v.s)
	v, err = parseJSON([]byte("\"a\xffb\""))
	require.NoError(t, err)
	require.Equal(t, "a\ufffdb", v.s)
}

// toInterface converts a value to what encoding/json decodes with UseNumber.
func toInterface(v *value) any {
	switch v.kind {
	case kindNull:
		return nil
	case kindBool:
		return v.b
	case kindNumber:
		return json.Number(v.s)
	case kindString:
		return v.s
	case kindArray:
		out := make([]any, len(v.arr))
		for i := range v.arr {
			out[i] = toInterface(&v.arr[i])
		}
		return out
	}
	out := make(map[string]any, len(v.obj))
	for i := range v.obj {
		out[v.obj[i].key] = toInterface(&v.obj[i].val)
	}
	return out
}

// FuzzParseJSON checks the decoder against encoding/json: the same documents
// are accepted and they decode to the same values.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[1,2.5e-3,"x",true,false,null]}`, `"\ud83d\ude00"`, `"\ud800"`,
		`{"a":1,"a":2}`, `-0.0e+1`, " [ 1 , { \"k\" : \"v\" } ] ", "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseJSON(data)
		valid := json.Valid(data)
		if (err == nil) != valid {
			t.Fatalf("parseJSON err=%v, json.Valid=%v for %q", err, valid, data)
		}
		if err != nil {
			return
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&want))
		require.Equal(t, want, toInterface(&got))
	})
}
