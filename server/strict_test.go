package server

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/govhost/govhost/api"
)

// randomBody writes an authorize-like body: the request's own keys, their
// case variants and unknown keys, repeated keys (also spelled with
// escapes), nested objects and arrays, strings with escapes and lone
// surrogates, sometimes cut short or followed by more.
func randomBody(r *rand.Rand, depth int) string {
	keys := []string{`"tool"`, `"Tool"`, `"arguments"`, `"metadata"`, `"path_args"`, `"cwd"`, `"k"`, `"\u0074ool"`, `"x"`, `"wait_ms"`, `"é"`}
	switch n := r.Intn(9); {
	case depth > 3 || n < 3:
		return []string{`1`, `-2.5e3`, `true`, `null`, `"s"`, `"\n\u00e9\\"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\"", `""`}[r.Intn(10)]
	case n < 7:
		var b strings.Builder
		b.WriteString("{")
		for i, m := 0, r.Intn(5); i < m; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s :%s", keys[r.Intn(len(keys))], randomBody(r, depth+1))
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
			b.WriteString(randomBody(r, depth+1))
		}
		b.WriteString("]")
		return b.String()
	}
}

// sameAsTheReaderItAdopted: checkStrict (governance's one strict reader)
// answers as server's own reader did before, refusal for refusal (code
// and message), for the authorize shape and for a free one.
func sameAsTheReaderItAdopted(t *testing.T, body []byte) {
	t.Helper()
	for _, s := range []*shape{shapeOf(reflect.TypeOf(&api.AuthorizeRequest{})), freeShape} {
		if got, want := fmt.Sprint(checkStrict(body, s)), fmt.Sprint(checkStrictReference(body, s)); got != want {
			t.Fatalf("%q: the adopted reader says %s, the old one %s", body, got, want)
		}
	}
}

func TestCheckStrict_SameAsTheReaderItAdopted(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	refused := 0
	for i := 0; i < 20000; i++ {
		body := randomBody(r, 0)
		switch i % 7 {
		case 0:
			body = body[:r.Intn(len(body)+1)]
		case 1:
			body += " {}"
		}
		sameAsTheReaderItAdopted(t, []byte(body))
		if checkStrict([]byte(body), freeShape) != nil {
			refused++
		}
	}
	if refused < 2000 {
		t.Fatalf("only %d bodies refused: too few to compare", refused)
	}
	for _, body := range []string{
		strings.Repeat("[", maxStrictDepth+1) + strings.Repeat("]", maxStrictDepth+1),
		`{"metadata":{"k":1,"k":2}}`, `{"arguments":{"a":{"Tool":1}},"Tool":2}`, `{"x":1,"tool":"a","tool":"b"}`,
	} {
		sameAsTheReaderItAdopted(t, []byte(body))
	}
}

func FuzzCheckStrict_SameAsTheReaderItAdopted(f *testing.F) {
	r := rand.New(rand.NewSource(4))
	for range 64 {
		f.Add([]byte(randomBody(r, 0)))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsTheReaderItAdopted(t, body) })
}
