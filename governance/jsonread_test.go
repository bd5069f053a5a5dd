package governance

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonReaderSeeds are documents the one reader must read exactly as
// encoding/json does, or refuse (and leave to encoding/json's errors).
var jsonReaderSeeds = []string{
	`{}`, `[]`, ` [ ] `, `{"a":[1,-0,0.5,1e3,-2E-7,{"b":null}],"a":true}`, `"\u00e9\ud83d\ude00\/\b\f\n\r\t\\\""`,
	`"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `tru`, `nul`, `[1,]`, `[,1]`,
	`{"a":1,}`, `{"a"}`, "\"\x01\"", "\"\xff\"", "\xef\xbb\xbf{}", `{"x":NaN}`, `[1] [2]`, `"\x"`, `"\u12"`,
	strings.Repeat("[", 600) + strings.Repeat("]", 600), `{"a":{"a":{"a":{}}}}`, "\t\n\r 7 \t",
}

// TestJSONReader_SameAsEncodingJSON: every seed and every input of the
// Python reference vectors reads to the same value (or the same error)
// through ParseJSON's one reader as through encoding/json.
func TestJSONReader_SameAsEncodingJSON(t *testing.T) {
	inputs := append([]string(nil), jsonReaderSeeds...)
	f, err := os.Open("testdata/canonical.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct {
			Input json.RawMessage `json:"input"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		inputs = append(inputs, string(v.Input))
	}
	require.NoError(t, sc.Err())
	read := 0
	for _, in := range inputs {
		sameAsEncodingJSON(t, []byte(in))
		r := jsonReader{jsonScanner{b: []byte(in)}}
		if _, ok := r.document(); ok {
			read++
		}
	}
	require.Greater(t, read, len(inputs)/2, "the fast reader should read most inputs itself")
}

func sameAsEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := parseJSONSlow(data)
	r := jsonReader{jsonScanner{b: data}}
	got, ok := r.document()
	if ok {
		require.NoError(t, wantErr, "the reader accepted what encoding/json refuses: %q", data)
		require.Equal(t, want, got, "input %q", data)
	}
	viaAPI, err := ParseJSON(data)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error())
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, viaAPI)
	if ok || strings.Count(string(data), "[")+strings.Count(string(data), "{") > maxJSONDepth {
		return
	}
	t.Fatalf("the reader refused valid input %q", data)
}

func FuzzJSONReader_SameAsEncodingJSON(f *testing.F) {
	for _, s := range jsonReaderSeeds {
		f.Add([]byte(s))
	}
	for _, s := range parseObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameAsEncodingJSON(t, data) })
}
