package gatecases_test

import (
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk/gatecases"
)

// FuzzParse: any document either fails with an error or yields a file
// whose every case has a name, a valid expected decision and reason code,
// and a tool — never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a.b"}}]}`), false)
	f.Add([]byte("cases:\n  - {name: a, input: {tool: x}, want: {decision: deny, reason_code: a}}\n"), true)
	f.Add([]byte(`{"config":{"a":1},"cases":[]}`), false)
	f.Add([]byte("&a [*a, *a]"), true)
	f.Fuzz(func(t *testing.T, doc []byte, yaml bool) {
		file, err := gatecases.Parse(doc, yaml)
		if err != nil {
			return
		}
		if len(file.Cases) == 0 {
			t.Fatal("a parsed file has cases")
		}
		for _, c := range file.Cases {
			if c.Name == "" || !c.Want.Decision.Valid() || !abi.ValidReasonCode(c.Want.ReasonCode) || c.Input.Tool == "" {
				t.Fatalf("invalid case accepted: %+v", c)
			}
			in := gatecases.Input(c, file.Gate)
			if in.ABIVersion != abi.Version || in.Phase == "" || len(in.Arguments) == 0 {
				t.Fatalf("input defaults missing: %+v", in)
			}
		}
	})
}
