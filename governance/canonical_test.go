package governance_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

type vector struct {
	Input     json.RawMessage `json:"input"`
	Canonical *string         `json:"canonical"`
	SHA256    string          `json:"sha256"`
	Reject    string          `json:"reject"`
}

func readVectors(t *testing.T) []vector {
	t.Helper()
	f, err := os.Open("testdata/canonical.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v vector
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// TestCanonical_Vectors checks every reference vector computed with
// Python's json.dumps(sort_keys=True, separators=(",", ":"),
// ensure_ascii=False) byte for byte.
func TestCanonical_Vectors(t *testing.T) {
	for _, v := range readVectors(t) {
		t.Run(string(v.Input), func(t *testing.T) {
			in, err := governance.ParseJSON(v.Input)
			require.NoError(t, err)
			text, digest, err := governance.CanonicalDigest(in)
			if v.Reject != "" {
				require.ErrorIs(t, err, governance.ErrNotCanonical)
				return
			}
			require.NoError(t, err)
			require.Equal(t, *v.Canonical, string(text))
			require.Equal(t, v.SHA256, digest)
		})
	}
}

func TestCanonical_GoValues(t *testing.T) {
	type level string
	id := uuid.MustParse("1414f6b5-06d0-42db-a02b-ff2f31bfa6af")
	at := time.Date(2026, 11, 29, 13, 0, 0, 505989123, time.FixedZone("CET", 3600))
	got, err := governance.Canonical(map[string]any{
		"id":     id,
		"at":     at,
		"level":  level("hard"),
		"fields": []string{"path", "mode"},
		"n":      []int64{1, -2},
		"nested": map[string]string{"b": "2", "a": "1"},
		"none":   nil,
		"ptr":    (*string)(nil),
		"u8":     uint8(7),
	})
	require.NoError(t, err)
	require.Equal(t, `{"at":"2026-11-29T12:00:00.505989Z","fields":["path","mode"],"id":"1414f6b5-06d0-42db-a02b-ff2f31bfa6af","level":"hard","n":[1,-2],"nested":{"a":"1","b":"2"},"none":null,"ptr":null,"u8":7}`, string(got))
}

func TestCanonical_Refused(t *testing.T) {
	cases := map[string]struct {
		in   any
		path string
	}{
		"float":             {1.5, "$"},
		"nan":               {math.NaN(), "$"},
		"float deep":        {map[string]any{"a": []any{1, map[string]any{"b": 0.25}}}, `$["a"][1]["b"]`},
		"bytes":             {map[string]any{"raw": []byte("x")}, `$["raw"]`},
		"invalid utf8":      {map[string]any{"s": "a\xffb"}, `$["s"]`},
		"invalid utf8 key":  {map[string]any{"\xff": 1}, `$`},
		"struct":            {struct{ A int }{1}, "$"},
		"int keys":          {map[int]string{1: "a"}, "$"},
		"json float number": {json.Number("1e3"), "$"},
		"zero time":         {time.Time{}, "$"},
		"channel":           {make(chan int), "$"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := governance.Canonical(c.in)
			var ce *governance.CanonicalError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, governance.ErrNotCanonical)
			require.Equal(t, c.path, ce.Path)
		})
	}
}

func TestParseJSON_Malformed(t *testing.T) {
	cases := map[string]string{
		"truncated":       `{"a": [1, 2`,
		"trailing":        `{"a": 1} {"b": 2}`,
		"lone high":       `"\ud83d"`,
		"lone low":        `"x\ude80y"`,
		"reversed pair":   `"\ude80\ud83d"`,
		"invalid utf8":    "\"a\xffb\"",
		"not json":        `nope`,
		"empty":           ``,
		"trailing commas": `[1,]`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := governance.ParseJSON([]byte(in))
			var je *governance.JSONError
			require.ErrorAs(t, err, &je)
			require.ErrorIs(t, err, governance.ErrMalformedJSON)
		})
	}
	v, err := governance.ParseJSON([]byte(`{"a":1,"a":2,"s":"\ud83d\ude80"}`))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": json.Number("2"), "s": "🚀"}, v)
}

// TestParseJSON_NonFiniteAreFloats: Python reads NaN and Infinity as
// floats; they are refused as floats, not as malformed JSON.
func TestParseJSON_NonFiniteAreFloats(t *testing.T) {
	for _, in := range []string{`NaN`, `[1, Infinity]`, `{"a": -Infinity}`} {
		_, err := governance.ParseJSON([]byte(in))
		require.ErrorIs(t, err, governance.ErrNotCanonical, in)
	}
	_, err := governance.ParseJSON([]byte(`["NaN", Nope]`))
	require.ErrorIs(t, err, governance.ErrMalformedJSON, "NaN inside a string is text")
}

func TestCanonical_BigIntegersExact(t *testing.T) {
	for _, lit := range []string{"123456789012345678901234567890", "-99999999999999999999", "-0"} {
		v, err := governance.ParseJSON([]byte(lit))
		require.NoError(t, err)
		got, err := governance.Canonical(v)
		require.NoError(t, err)
		want := lit
		if lit == "-0" {
			want = "0" // Python: json.dumps(json.loads("-0")) == "0"
		}
		require.Equal(t, want, string(got))
	}
}

func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[true,null,"x\u2028<>&"]}`, `"\u0001\b\f"`, `12345678901234567890`, `[1.5]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := governance.ParseJSON(data)
		if err != nil {
			return
		}
		text, err := governance.Canonical(v)
		if err != nil {
			require.ErrorIs(t, err, governance.ErrNotCanonical)
			return
		}
		// Canonical text is valid JSON that parses back to a value with the
		// same canonical text (a fixed point), and Go's decoder agrees.
		require.True(t, json.Valid(text), "%q", text)
		again, err := governance.ParseJSON(text)
		require.NoError(t, err)
		text2, err := governance.Canonical(again)
		require.NoError(t, err)
		require.True(t, bytes.Equal(text, text2))
	})
}

func TestCheckCanonical_Cases(t *testing.T) {
	good := []string{`{}`, `[]`, `{"":6,"A":3,"_":4,"a":2,"aa":5,"b":1}`, `"\u0001\b\f\n\r\t\"\\"`, `-1`, `0`,
		`{"e":2,"z":3,"é":1,"中":4,"￿":6,"🚀":5}`, `{"\u001f":1,"\"":2,"\\":3}`, `[1,"a",null,true,false,[2,[3]]]`, "\"\u007f\u2028<>&\""}
	for _, s := range good {
		require.NoError(t, governance.CheckCanonical([]byte(s)), s)
	}
	bad := []string{`{ }`, `{"b":1,"a":2}`, `{"a":1,"a":1}`, `1.5`, `1e3`, `-0`, `01`, `"\u00e9"`, `"\/"`, `"\u000a"`, `"\u001F"`,
		"\"\x01\"", "\"\xff\"", `[1,]`, `{"a":1}x`, `tru`, `"abc`, ``, `{"a" :1}`, `[1, 2]`}
	for _, s := range bad {
		err := governance.CheckCanonical([]byte(s))
		require.ErrorIs(t, err, governance.ErrNotCanonical, s)
	}
}

// FuzzCheckCanonical: CheckCanonical accepts exactly the texts that are
// their own canonical encoding.
func FuzzCheckCanonical(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x"],"b":{}}`, `{"b":1,"a":2}`, `"\u0001"`, `-0`, `{"\u001f":1,"\"":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := governance.CheckCanonical(data)
		v, perr := governance.ParseJSON(data)
		var fixed []byte
		if perr == nil {
			fixed, perr = governance.Canonical(v)
		}
		same := perr == nil && bytes.Equal(fixed, data)
		require.Equal(t, same, err == nil, "input %q: check=%v canonical=%q", data, err, fixed)
	})
}
