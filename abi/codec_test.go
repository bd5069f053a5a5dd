package abi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var sampleInputs = []GateInput{
	{},
	{ABIVersion: 1, GateID: "g", Phase: PhaseCheck, Tool: "bash", Arguments: json.RawMessage(`{"command":"rm -rf /"}`)},
	{
		ABIVersion: 1, GateID: "paths", Phase: PhaseRecheck, Tool: "read", Operation: "read", Action: "read_file",
		Arguments:     json.RawMessage(`{"path":"notes/\u00e9 \"q\".txt","n":[1,2.5e3,-0,true,null,{}]}`),
		ArgumentOrder: []string{"path", "n"}, Cwd: "/work", Workspace: "/work/proj",
		Paths: []PathFact{
			{Arg: "path", Raw: "notes/é \"q\".txt", Resolved: "/work/notes/é \"q\".txt", Exists: true, Kind: PathKindFile, NearestExisting: "/work/notes"},
			{Arg: "other", Kind: PathKindMissing},
		},
		Context: OperationInfo{OperationID: "op", Actor: &ActorRef{Kind: "user", ID: "ana"}, RunID: "r", AgentName: "a", ToolCallID: "c",
			Metadata: map[string]string{"z": "1", "a": "tab\there", "ctl": "\x01\x1f<>&\u2028", "bad": "\xff\xfe"}},
	},
	{Tool: "\U0001F600 emoji", Arguments: json.RawMessage(` [ 1 , 2 ] `), Context: OperationInfo{Actor: &ActorRef{}}},
}

// normalize makes encoding/json's and our results comparable: nil and empty
// collections are the same to a gate.
func normalize(in GateInput) GateInput {
	if len(in.ArgumentOrder) == 0 {
		in.ArgumentOrder = nil
	}
	if len(in.Paths) == 0 {
		in.Paths = nil
	}
	if len(in.Context.Metadata) == 0 {
		in.Context.Metadata = nil
	}
	if len(in.Arguments) == 0 || string(in.Arguments) == "null" {
		in.Arguments = nil // encoding/json also turns an absent RawMessage into null and back
	}
	in.Arguments = append(json.RawMessage(nil), in.Arguments...)
	return in
}

func TestAppendGateInput_MatchesEncodingJSON(t *testing.T) {
	for _, in := range sampleInputs {
		got, err := AppendGateInput(nil, &in)
		require.NoError(t, err)
		require.True(t, json.Valid(got), string(got))
		var viaJSON, viaOurs GateInput
		require.NoError(t, json.Unmarshal(got, &viaJSON))
		require.NoError(t, DecodeGateInput(got, &viaOurs))
		std, err := json.Marshal(in)
		require.NoError(t, err)
		var want GateInput
		require.NoError(t, json.Unmarshal(std, &want))
		require.Equal(t, normalize(want), normalize(viaJSON))
		require.Equal(t, normalize(want), normalize(viaOurs))
	}
}

func TestAppendGateInput_BadArguments(t *testing.T) {
	_, err := AppendGateInput(nil, &GateInput{Arguments: json.RawMessage(`{"a":`)})
	require.ErrorIs(t, err, ErrBadRawJSON)
	b, err := AppendGateInput(nil, &GateInput{})
	require.NoError(t, err)
	require.Contains(t, string(b), `"arguments":null`)
}

func TestDecodeGateInput_ReusesAndResets(t *testing.T) {
	var in GateInput
	big := sampleInputs[2]
	b, _ := json.Marshal(big)
	require.NoError(t, DecodeGateInput(b, &in))
	actor := in.Context.Actor
	small, _ := json.Marshal(GateInput{Tool: "x", Paths: []PathFact{{Arg: "p"}}, Context: OperationInfo{Actor: &ActorRef{ID: "b"}}})
	require.NoError(t, DecodeGateInput(small, &in))
	require.Equal(t, []PathFact{{Arg: "p"}}, in.Paths, "no stale fields from the previous document")
	require.Same(t, actor, in.Context.Actor, "the actor is reused")
	require.Equal(t, ActorRef{ID: "b"}, *in.Context.Actor)
	require.Empty(t, in.Cwd)
	require.Empty(t, in.Context.Metadata)
}

func TestGateOutput_RoundTrip(t *testing.T) {
	for _, out := range []GateOutput{
		{Decision: DecisionAllow, ReasonCode: "a.b"},
		{Decision: DecisionDeny, ReasonCode: "x", Detail: "d \"q\" \n", Message: "m", MatchedRule: "r", Arguments: json.RawMessage(`{"a":[1]}`)},
		{Decision: DecisionRequireApproval, ReasonCode: "y", Message: "approval required: w", DenyMessage: "permission denied: w is not allowed"},
	} {
		b, err := AppendGateOutput(nil, &out)
		require.NoError(t, err)
		std, _ := json.Marshal(out)
		var a, c GateOutput
		require.NoError(t, json.Unmarshal(b, &a))
		require.NoError(t, DecodeGateOutput(std, &c))
		require.Equal(t, out, a)
		require.Equal(t, out.Arguments, json.RawMessage(append([]byte(nil), c.Arguments...)))
		c.Arguments = out.Arguments
		require.Equal(t, out, c)
	}
	_, err := AppendGateOutput(nil, &GateOutput{Arguments: json.RawMessage(`nope`)})
	require.ErrorIs(t, err, ErrBadRawJSON)
}

func TestValidJSON(t *testing.T) {
	for _, s := range []string{`1`, ` {"a":[1,{"b":null}]} `, `"\u00e9"`, `-0.5e+3`, `[]`, `true`} {
		require.True(t, ValidJSON([]byte(s)), s)
	}
	for _, s := range []string{``, `{`, `01`, `1.`, `[1,]`, `{"a"}`, `"\x"`, "\"\x01\"", `tru`, `1 2`, `"\u12"`} {
		require.False(t, ValidJSON([]byte(s)), s)
	}
}

var inputKeys = [][]byte{[]byte("abi_version"), []byte("gate_id"), []byte("phase"), []byte("tool"), []byte("operation"),
	[]byte("action"), []byte("arguments"), []byte("argument_order"), []byte("cwd"), []byte("workspace"), []byte("paths"), []byte("context"),
	[]byte("arg"), []byte("raw"), []byte("resolved"), []byte("exists"), []byte("kind"), []byte("nearest_existing"),
	[]byte("operation_id"), []byte("actor"), []byte("id"), []byte("run_id"), []byte("agent_name"), []byte("tool_call_id"),
	[]byte("metadata"), []byte("decision"), []byte("reason_code"), []byte("detail"), []byte("message"), []byte("matched_rule"), []byte("deny_message")}

// caseFolded reports whether data may hold a key that encoding/json would
// match case-insensitively (or through a Unicode fold) but we would not.
func caseFolded(data []byte) bool {
	lower := bytes.ToLower(data)
	for _, k := range inputKeys {
		if bytes.Count(lower, k) != bytes.Count(data, k) {
			return true
		}
	}
	return bytes.ContainsAny(data, "\u212a\u017f") || !bytes.Equal(bytes.ToLower(data), lower) || bytes.IndexFunc(data, func(r rune) bool { return r > 0x7f }) >= 0 && bytes.ContainsRune(data, 'K')
}

func FuzzDecodeGateInput(f *testing.F) {
	for _, in := range sampleInputs {
		b, _ := json.Marshal(in)
		f.Add(b)
	}
	f.Add([]byte(`null`))
	f.Add([]byte(`{"paths":[null,{"exists":null}],"argument_order":[null],"context":{"metadata":{"a":null},"actor":null}}`))
	f.Add([]byte(`{"tool":"\ud800\udc00\ud800x\udc00","abi_version":-0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ours GateInput
		oursErr := DecodeGateInput(data, &ours)
		var std GateInput
		stdErr := json.Unmarshal(data, &std)
		if caseFolded(data) {
			return
		}
		if (oursErr == nil) != (stdErr == nil) {
			t.Fatalf("ours %v, encoding/json %v, on %q", oursErr, stdErr, data)
		}
		if oursErr != nil {
			return
		}
		require.Equal(t, normalize(std), normalize(ours))
		again, err := AppendGateInput(nil, &ours)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var back GateInput
		require.NoError(t, DecodeGateInput(again, &back))
		require.Equal(t, normalize(ours), normalize(back))
	})
}

func FuzzDecodeGateOutput(f *testing.F) {
	f.Add([]byte(`{"decision":"allow","reason_code":"a.b","arguments":{"x":1}}`))
	f.Add([]byte(`{"decision":"deny","reason_code":"x","detail":"\u00e9\n","arguments":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ours, std GateOutput
		oursErr := DecodeGateOutput(data, &ours)
		stdErr := json.Unmarshal(data, &std)
		if caseFolded(data) {
			return
		}
		if (oursErr == nil) != (stdErr == nil) {
			t.Fatalf("ours %v, encoding/json %v, on %q", oursErr, stdErr, data)
		}
		if oursErr == nil {
			ours.Arguments = append(json.RawMessage(nil), ours.Arguments...)
			if len(std.Arguments) == 0 {
				std.Arguments = nil
			}
			if len(ours.Arguments) == 0 {
				ours.Arguments = nil
			}
			require.Equal(t, std, ours)
		}
	})
}

// TestDecode_NestingLimit: the decoders refuse exactly the nesting
// encoding/json refuses (10 000 levels, counting the document itself), in
// arguments of inputs and outputs and in unknown fields.
func TestDecode_NestingLimit(t *testing.T) {
	for _, levels := range []int{9999, 10000, 10001, 10002} {
		nest := strings.Repeat("[", levels-2) + strings.Repeat("]", levels-2)
		for _, doc := range []string{
			`{"decision":"allow","reason_code":"a","arguments":{"a":` + nest + `}}`,
			`{"decision":"allow","reason_code":"a","unknown":{"a":` + nest + `}}`,
		} {
			var v any
			wantErr := json.Unmarshal([]byte(doc), &v) != nil
			var out GateOutput
			require.Equal(t, wantErr, DecodeGateOutput([]byte(doc), &out) != nil, "output, %d levels", levels)
		}
		doc := `{"tool":"x","arguments":{"a":` + nest + `}}`
		var v any
		wantErr := json.Unmarshal([]byte(doc), &v) != nil
		var in GateInput
		require.Equal(t, wantErr, DecodeGateInput([]byte(doc), &in) != nil, "input, %d levels", levels)
		require.Equal(t, levels > 10000, wantErr)
	}
}

// The string scans step eight bytes at a time: a quote, escape, control
// byte or non-ASCII byte at any offset from a step must be seen, in keys,
// decoded strings and skipped ones, exactly as encoding/json sees it.
func TestDecodeGateInput_StringsAtEveryOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "\x00", "\x1f", "\x7f", "é", "\xff", "\xc3", "\x80", "\x9f", "\xa0", `"`, `\`, `\x`}
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(30); n > 0; n-- {
			if rng.IntN(10) == 0 {
				b.WriteString(specials[rng.IntN(len(specials))])
			} else {
				b.WriteByte(byte(0x20 + rng.IntN(0x5f)))
			}
		}
		text := b.String()
		for _, doc := range []string{
			`{"tool":"` + text + `"}`,
			`{"gate_id":"g","arguments":{"k":"` + text + `"},"cwd":"` + text + `"}`,
			`{"` + text + `":1,"tool":"x"}`,
		} {
			var want, got GateInput
			wantErr := json.Unmarshal([]byte(doc), &want)
			gotErr := DecodeGateInput([]byte(doc), &got)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("%q: encoding/json error %v, DecodeGateInput error %v", doc, wantErr, gotErr)
			}
			if wantErr == nil && (got.Tool != want.Tool || got.Cwd != want.Cwd || !bytes.Equal(got.Arguments, want.Arguments)) {
				t.Fatalf("%q: got %+v, want %+v", doc, got, want)
			}
		}
	}
}

// AppendString escapes as encoding/json does (without its HTML escapes),
// whatever the offset of the byte that needs escaping.
func TestAppendString_MatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []string{"\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "\xff", "\xc3", "\x80", "\x9f", "\xa0", "\u2028", "\u2029", "😀", "<&>"}
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(30); n > 0; n-- {
			if rng.IntN(8) == 0 {
				b.WriteString(specials[rng.IntN(len(specials))])
			} else {
				b.WriteByte(byte(0x20 + rng.IntN(0x5f)))
			}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(b.String()))
		if got := AppendString(nil, b.String()); string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("AppendString(%q) = %s, want %s", b.String(), got, want.String())
		}
	}
}

// smallInt agrees with strconv wherever it answers, and answers for every
// integer of up to nine digits.
func TestSmallInt_MatchesStrconv(t *testing.T) {
	lits := []string{"0", "-0", "1", "-1", "7", "123456789", "-999999999", "1234567890", "1.5", "1e3", "-", "", "0x1", "+1", "01"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		lits = append(lits, strconv.Itoa(rng.IntN(2_000_000_000)-1_000_000_000))
	}
	for _, lit := range lits {
		n, ok := smallInt(lit)
		want, err := strconv.ParseInt(lit, 10, 64)
		digits := strings.TrimPrefix(lit, "-")
		if short := err == nil && len(digits) <= 9 && !strings.HasPrefix(lit, "+"); ok != short {
			t.Fatalf("smallInt(%q) ok = %v, want %v", lit, ok, short)
		}
		if ok && int64(n) != want {
			t.Fatalf("smallInt(%q) = %d, strconv says %d", lit, n, want)
		}
	}
}
