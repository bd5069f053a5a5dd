package destructive

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeString checks the hand-written JSON string decoder against
// encoding/json on every input encoding/json accepts as a string.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u0026\u003e"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\"\\\/\b\f\n\r\t"`, "\"\xff\"", `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			return
		}
		raw = bytes.TrimRight(raw, " \t\r\n")
		if len(raw) == 0 || raw[0] != '"' {
			return // json accepts surrounding whitespace; the scanner never passes it
		}
		_, end := scanString(raw, 0)
		if end != len(raw) {
			t.Fatalf("scanString end %d for %q", end, raw)
		}
		got, ok := decodeString(raw)
		if !ok || got != want {
			t.Fatalf("decodeString(%q) = %q, %v; encoding/json: %q", raw, got, ok, want)
		}
		if a, b := foldJSON(raw, nil), fold(want, nil); string(a) != string(b) {
			t.Fatalf("foldJSON(%q) = %q, fold(decoded) = %q", raw, a, b)
		}
	})
}

// FuzzLookupKey checks the top-level key lookup against encoding/json.
func FuzzLookupKey(f *testing.F) {
	for _, s := range []string{`{"command":"x"}`, `{"a":1,"command":[1,{"b":"c"}],"z":null}`, `{"command":"a","command":"b"}`, `{}`, `{"c\u006fmmand":"y"}`, ` { "command" : true } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m map[string]json.RawMessage
		jsonErr := json.Unmarshal(raw, &m)
		val, found, ok := lookupKey(raw, "command")
		if !ok {
			if jsonErr == nil && m != nil {
				t.Fatalf("lookupKey refused valid object %q", raw)
			}
			return
		}
		if jsonErr != nil {
			// Absent arguments (empty text) are an object with no members.
			if len(bytes.TrimSpace(raw)) == 0 && !found {
				return
			}
			t.Fatalf("lookupKey accepted invalid JSON %q", raw)
		}
		want, wantFound := m["command"]
		if found != wantFound {
			t.Fatalf("found=%v, encoding/json %v for %q", found, wantFound, raw)
		}
		if found {
			var a, b any
			if json.Unmarshal(val, &a) != nil || json.Unmarshal(want, &b) != nil {
				t.Fatalf("bad value %q / %q", val, want)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("value %s, encoding/json %s in %q", ja, jb, raw)
			}
		}
	})
}
