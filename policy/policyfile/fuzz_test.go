package policyfile_test

import (
	"encoding/json"
	"testing"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// FuzzLoad: any input either loads into a valid staged snapshot whose JSON
// round-trips, or is refused with a *FieldError; it never panics.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte(`{"policy_id":"6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01","version":"1","gates":[]}`))
	f.Add([]byte(`{"gates":[{"config":1e400}]}`))
	resolve := func(ref string) (string, error) { return governance.SHA256Hex([]byte(ref)), nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := policyfile.Load(data, "fuzz.json", resolve)
		if err != nil {
			var fe *policyfile.FieldError
			if !asFieldError(err, &fe) {
				t.Fatalf("not a FieldError: %T %v", err, err)
			}
			return
		}
		if err := snap.Validate(); err != nil {
			t.Fatal(err)
		}
		text, err := snap.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back governance.PolicySnapshot
		if err := json.Unmarshal(text, &back); err != nil {
			t.Fatalf("%v: %s", err, text)
		}
		if back.Digest() != snap.Digest() {
			t.Fatal("digest changed in a round trip")
		}
	})
}

func asFieldError(err error, target **policyfile.FieldError) bool {
	fe, ok := err.(*policyfile.FieldError)
	*target = fe
	return ok
}
