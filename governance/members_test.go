package governance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The one ordered-object reader (readMembers) under ObjectMembers and
// readObject answers as the encoding/json token paths it replaced, value
// for value and error for error.

var membersSeeds = []string{
	`{}`, ` { } `, `{"a":1,"b":[1, 2],"a":{"x" : "y"}}`, `{"\u0061":1,"a":2}`, `{"a":{"b":1,"b":2}}`,
	`{"a":1} x`, `{"a":1}{"b":2}`, `[1]`, `1`, `{"a":}`, `{"a":1,}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`,
	`{"record_type":"x","Record_Type":"y"}`, `{"k":"v","n":null}`, `{"k":"v"}`, `{"n":null,"k":"v"} `,
	`{"k":"v","n":null,"k":"w"}`, `{"k":"v","n":{"x":1}}`, `{"k":"v","n":1} 2`,
}

func sameMembersAsTheTokenPath(t *testing.T, data []byte) {
	t.Helper()
	got, err := ObjectMembers(data)
	want, wantErr := objectMembersSlow(data)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "ObjectMembers(%q)", data)
	require.Equal(t, want, got, "ObjectMembers(%q)", data)

	fields := []string{"k", "n"}
	o, err := readObject(data, "doc", fields)
	wo, wantErr := readObjectSlow(data, "doc", fields)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "readObject(%q)", data)
	require.Equal(t, wo, o, "readObject(%q)", data)
}

func TestObjectMembers_SameAsTheTokenPath(t *testing.T) {
	for _, s := range membersSeeds {
		sameMembersAsTheTokenPath(t, []byte(s))
	}
	r := rand.New(rand.NewSource(5))
	for range 5000 {
		doc := randomDocument(r, 0)
		sameMembersAsTheTokenPath(t, []byte(doc))
		sameMembersAsTheTokenPath(t, []byte(doc[:r.Intn(len(doc)+1)]))
	}
}

// TestObjectMembers_ValuesAreTheirOwn: the raw values do not alias the
// caller's buffer (a scanner's line is reused for the next one).
func TestObjectMembers_ValuesAreTheirOwn(t *testing.T) {
	data := []byte(`{"k":"v","n":null}`)
	m, err := ObjectMembers(data)
	require.NoError(t, err)
	o, err := readObject(data, "doc", []string{"k", "n"})
	require.NoError(t, err)
	copy(data, `{"k":"X","n":true}`)
	require.Equal(t, `"v"`, string(m[0].Value))
	require.Equal(t, `"v"`, string(o.members["k"]))
}

func FuzzObjectMembers_SameAsTheTokenPath(f *testing.F) {
	for _, s := range membersSeeds {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewSource(6))
	for range 32 {
		f.Add([]byte(randomDocument(r, 0)))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameMembersAsTheTokenPath(t, data) })
}

// TestJSONToolkit_PythonVectors: every input of the Python reference
// vectors, and every line of the reference chain file, reads through the
// one strict walker and the one member reader as through the token paths
// they replaced; the chain lines pass readObject's fast path.
func TestJSONToolkit_PythonVectors(t *testing.T) {
	for _, file := range []string{"testdata/canonical.jsonl", "testdata/chain.jsonl"} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			docs := [][]byte{line}
			var v struct {
				Input json.RawMessage `json:"input"`
			}
			if file == "testdata/canonical.jsonl" {
				require.NoError(t, json.Unmarshal(line, &v))
				docs = append(docs, v.Input)
			}
			for _, doc := range docs {
				sameMembersAsTheTokenPath(t, doc)
				sameAsTheTokenWalk(t, doc)
			}
			if file == "testdata/chain.jsonl" {
				_, ok := readObjectFast(line, "record", RecordFields)
				require.True(t, ok, "a reference chain line takes the fast path: %s", line)
			}
		}
	}
}
