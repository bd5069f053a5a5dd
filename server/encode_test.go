package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// encodingJSON is what the server wrote before the hot routes got their
// own writers: encoding/json with HTML escaping off.
func encodingJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

func authorizeResults(text string, at time.Time, args json.RawMessage) []api.AuthorizeResult {
	return []api.AuthorizeResult{
		{Decision: api.DecisionAllow, Permit: &api.PermitInfo{
			PermitID: text, OperationID: uuid.New(), TaskID: uuid.New(), Tool: text,
			ArgumentDigest: governance.SHA256Hex([]byte(text)), Arguments: args, ExpiresAt: at,
		}},
		{Decision: api.DecisionDeny, Denial: &api.Denial{OperationID: uuid.NewString(), GateID: text, ReasonCode: "destructive.rm_recursive_force", Message: text}},
		{Decision: api.DecisionDeny, Denial: &api.Denial{OperationID: text, ReasonCode: text}},
		{Decision: api.DecisionPending, AuthorizationID: text, ApprovalID: uuid.NewString()},
		{Decision: text},
		{},
	}
}

// TestEncode_SameAsEncodingJSON: the authorize and complete answers are
// written byte for byte as encoding/json writes them: escapes (control
// characters, U+2028, invalid UTF-8, HTML characters left as they are),
// times in any zone, empty and non-compact arguments, omitted members.
func TestEncode_SameAsEncodingJSON(t *testing.T) {
	texts := []string{"", "reader", "a\"b\\c\n\t\r\x01\x1f", "<tag>&amp;", "line\u2028sep\u2029", "bad \xff utf-8 \xc3", "é ü 日本 🙂"}
	times := []time.Time{
		time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 6, 2, 0, 0, 123456789, time.FixedZone("x", 5*3600+1800)),
		time.Date(2026, 12, 6, 2, 0, 0, 120000000, time.Local),
	}
	argss := []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"path":"a b","n":[1,2.5,{"x":null}]}`), json.RawMessage("{ \"path\" :\n \"x\" }")}
	for _, text := range texts {
		for _, at := range times {
			for _, args := range argss {
				for _, r := range authorizeResults(text, at, args) {
					require.Equal(t, string(encodingJSON(t, r)), string(appendAuthorizeResult(nil, &r)))
				}
			}
		}
		for _, recorded := range []bool{true, false} {
			c := api.Completed{PermitID: text, Recorded: recorded}
			require.Equal(t, string(encodingJSON(t, c)), string(appendCompleted(nil, &c)))
		}
	}
}

func FuzzEncode_AuthorizeResultSameAsEncodingJSON(f *testing.F) {
	f.Add("reader", "a\x00\u2028\xff", `{"a":1}`, int64(0))
	f.Fuzz(func(t *testing.T, text, other, args string, nanos int64) {
		raw := json.RawMessage(args)
		if !json.Valid(raw) {
			raw = nil
		}
		at := time.Unix(0, nanos).UTC()
		for _, r := range authorizeResults(text+other, at, raw) {
			require.Equal(t, string(encodingJSON(t, r)), string(appendAuthorizeResult(nil, &r)))
		}
	})
}

// TestCheckStrict_SameAsTheChecksItReplaces: on a free shape (any keys),
// checkStrict accepts exactly what encoding/json reads as one document and
// governance.CheckStrictJSON finds unambiguous.
func TestCheckStrict_SameAsTheChecksItReplaces(t *testing.T) {
	for _, body := range []string{
		`{}`, `[]`, `1`, `-0.5e+3`, `"x"`, `null`, `{"a":{"b":[1,{"c":true}]}}`,
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `[{"a":1},{"a":1}]`, `{"a":1,"\u0061":2}`,
		`{"s":"\ud83d\ude00"}`, `{"s":"\ud800"}`, `{"s":"\udc00x"}`, "{\"s\":\"\xff\"}",
		`{"a":}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `1e`, `tru`, `{"a":"\x"}`, "\"\x01\"",
		`{} {}`, `{} x`, ` {"a" : [ 1 , 2 ] } `,
	} {
		old := governance.CheckStrictJSON([]byte(body), "body") == nil && json.Valid([]byte(body))
		err := checkStrict([]byte(body), freeShape)
		require.Equal(t, old, err == nil, "%s: %v", body, err)
	}
}

func FuzzCheckStrict_SameAsTheChecksItReplaces(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"s":"\ud800"}`, `[{"a":[]}]`, `{"a":1,"\u0061":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		old := governance.CheckStrictJSON(body, "body") == nil && json.Valid(body)
		err := checkStrict(body, freeShape)
		if errors.Is(err, errMalformed) && json.Valid(body) {
			t.Fatalf("%q: valid JSON read as malformed", body)
		}
		require.Equal(t, old, err == nil, "%q: %v", body, err)
	})
}

// TestCheckStrict_NoAllocationForAValidBody: the strict pass over an
// authorize body costs no allocation (the decode it replaced cost about
// sixty a request: encoding/json's token reader twice).
func TestCheckStrict_NoAllocationForAValidBody(t *testing.T) {
	body := []byte(`{"tool":"reader","operation":"read_file","arguments":{"path":"notes.md","n":[1,2,{"deep":"\u00e9\ud83d\ude00"}]},` +
		`"cwd":"/w","path_args":["path"],"metadata":{"k":"v"},"wait_ms":0}`)
	s := shapeOf(reflect.TypeOf(&api.AuthorizeRequest{}))
	require.NoError(t, checkStrict(body, s))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = checkStrict(body, s) }))
	require.Error(t, checkStrict([]byte(`{"tool":"reader","Tool":"bash"}`), s))
}
