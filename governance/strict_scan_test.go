package governance

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// randomDocument writes a JSON document with nested objects and arrays,
// keys often repeated (also spelled with escapes), strings with escapes,
// numbers and literals.
func randomDocument(r *rand.Rand, depth int) string {
	keys := []string{`"a"`, `"b"`, `"\u0061"`, `"a\"b"`, `"ü"`, `"\u00fc"`, `"x\\/y"`, `"x/y"`, `"tool"`, `"Tool"`}
	switch n := r.Intn(9); {
	case depth > 4 || n < 3:
		return []string{`1`, `-2.5e3`, `true`, `false`, `null`, `"s"`, `"\n\u00e9\\"`, `0`, `""`}[r.Intn(9)]
	case n < 6:
		var b strings.Builder
		b.WriteString("{")
		for i, m := 0, r.Intn(5); i < m; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s :%s", keys[r.Intn(len(keys))], randomDocument(r, depth+1))
		}
		b.WriteString("}")
		return b.String()
	default:
		var b strings.Builder
		b.WriteString("[")
		for i, m := 0, r.Intn(4); i < m; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(randomDocument(r, depth+1))
		}
		b.WriteString(" ]")
		return b.String()
	}
}

// TestStrictScan_AnswersAsTheTokenWalk: on random documents, well-formed
// or cut short, CheckStrictJSON (the one strict walker) refuses exactly
// what the token walk it replaced refuses, naming the same key.
func TestStrictScan_AnswersAsTheTokenWalk(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	wellFormed, dups := 0, 0
	for i := 0; i < 20000; i++ {
		doc := randomDocument(r, 0)
		if i%5 == 0 && len(doc) > 1 {
			doc = doc[:r.Intn(len(doc))] // malformed: left to the decoder by both
		}
		if !utf8.ValidString(doc) {
			continue // cut inside a character: refused before either path
		}
		sameAsTheTokenWalk(t, []byte(doc))
		if json.Valid([]byte(doc)) {
			wellFormed++
			if CheckStrictJSON([]byte(doc), "doc") != nil {
				dups++
			}
		}
	}
	if wellFormed < 10000 || dups < 1000 {
		t.Fatalf("%d well-formed documents, %d with a key twice: too few to compare", wellFormed, dups)
	}
	for _, doc := range []string{`{"a":1,"\u0061":2}`, `{"a":{"b":1},"c":{"b":2}}`, `[{"a":1},{"a":1}]`, strings.Repeat(`[`, 600) + strings.Repeat(`]`, 600)} {
		sameAsTheTokenWalk(t, []byte(doc))
	}
	if !json.Valid([]byte(`{"a":1,"\u0061":2}`)) || CheckStrictJSON([]byte(`{"a":1,"\u0061":2}`), "doc") == nil {
		t.Fatal("an escaped spelling of a key is the same key")
	}
}

// sameAsTheTokenWalk: CheckStrictJSON and the policy forms' exact-key
// check answer as the token walk they replaced, error for error.
func sameAsTheTokenWalk(t *testing.T, doc []byte) {
	t.Helper()
	off, found := findLoneSurrogate(doc)
	if wantOff, wantFound := findLoneSurrogateReference(doc); off != wantOff || found != wantFound {
		t.Fatalf("%q: lone surrogate at %d %v, the old scan says %d %v", doc, off, found, wantOff, wantFound)
	}
	if got, want := fmt.Sprint(CheckStrictJSON(doc, "doc")), fmt.Sprint(checkExactKeysReference(doc, "doc", nil)); got != want {
		t.Fatalf("%q: the walker says %s, the token walk %s", doc, got, want)
	}
	if got, want := fmt.Sprint(checkExactKeys(doc, "doc", policyShape)), fmt.Sprint(checkExactKeysReference(doc, "doc", policyKeys)); got != want {
		t.Fatalf("%q with the policy keys: the walker says %s, the token walk %s", doc, got, want)
	}
}

// TestStrictScan_ManyKeys: an object of many keys is read in linear time
// (its keys go into a map past maxKeysScanned), and a key repeated far
// apart is still found.
func TestStrictScan_ManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	ok := b.String() + `"end":0}`
	require.NoError(t, CheckStrictJSON([]byte(ok), "doc"))
	err := CheckStrictJSON([]byte(b.String()+`"k\u0031":0}`), "doc")
	require.EqualError(t, err, "governance: invalid k1: appears twice")
	sameAsTheTokenWalk(t, []byte(b.String()+`"k7":0}`))
}

func FuzzCheckStrictJSON_SameAsTheTokenWalk(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	for range 64 {
		f.Add([]byte(randomDocument(r, 0)))
	}
	for _, s := range jsonReaderSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"policy_id":1,"Policy_ID":2}`))
	f.Add([]byte(`{} {"a":1,"a":2}`))
	f.Add([]byte(`{"a":"\ud800\u00"}`))
	f.Add([]byte(`"\x" "\udc00"`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameAsTheTokenWalk(t, doc)
		// The server's reading of one document (ReadStrictJSON) refuses
		// a superset: what encoding/json does not read as one value.
		err := ReadStrictJSON(doc, nil)
		if err == nil && (!json.Valid(doc) || CheckStrictJSON(doc, "doc") != nil) {
			t.Fatalf("%q: ReadStrictJSON accepted what encoding/json or CheckStrictJSON refuses", doc)
		}
		if err != nil && json.Valid(doc) && CheckStrictJSON(doc, "doc") == nil {
			t.Fatalf("%q: ReadStrictJSON refused (%v) an unambiguous document", doc, err)
		}
	})
}

// TestStrictScan_AllocatesNothingOnAPlainDocument: the check of a hook
// input without escaped keys allocates nothing (the token walk allocated
// per token).
func TestStrictScan_AllocatesNothingOnAPlainDocument(t *testing.T) {
	doc := []byte(`{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la \"x\"","timeout":120,"flags":[true,null,-1.5e3]},"tool_use_id":"toolu_1"}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := CheckStrictJSON(doc, "doc"); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Fatalf("%v allocations a check", n)
	}
}

// BenchmarkCheckStrictJSON_HookInput: the strict check of a Claude Code
// pre-tool input (agents.Dialect.Decode runs it on every hook event).
func BenchmarkCheckStrictJSON_HookInput(b *testing.B) {
	doc := []byte(`{"session_id":"9a1f7c2e-5b7d-4b0e-9d61-3c8f2a1e4d55","transcript_path":"/home/u/.claude/projects/p/9a1f.jsonl","cwd":"/home/u/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... 2>&1 | tail -20","description":"Run the tests","timeout":120000},"tool_use_id":"toolu_01ABCDEF"}`)
	for _, path := range []struct {
		name  string
		check func() error
	}{
		{"fast", func() error { return CheckStrictJSON(doc, "hook input") }},
		{"token-walk", func() error { return checkExactKeysReference(doc, "hook input", nil) }},
	} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := path.check(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
