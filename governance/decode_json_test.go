package governance

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// decodeTarget is a body shaped like the API's (strings, a raw value, a
// pointer to a struct, a time, numbers, a slice and a map).
type decodeTarget struct {
	Tool      string            `json:"tool"`
	Arguments json.RawMessage   `json:"arguments"`
	Permit    *decodePermit     `json:"permit,omitempty"`
	WaitMS    int64             `json:"wait_ms"`
	Failed    bool              `json:"failed"`
	PathArgs  []string          `json:"path_args"`
	Metadata  map[string]string `json:"metadata"`
}

type decodePermit struct {
	PermitID  string    `json:"permit_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

var decodeSeeds = []string{
	`{"tool":"reader","arguments":{"path":"notes.md","n":1},"wait_ms":5}`,
	`{"tool":"reader","permit":{"permit_id":"p","expires_at":"2026-12-06T07:40:00.123Z"}}` + "\n",
	`  {"path_args":["a","b"],"metadata":{"k":"v"},"failed":true}  `,
	`{"tool":"a"}{"tool":"b"}`,
	`{"tool":"a"} x`,
	`{"tool":"a"}}`,
	`{"tool":1}`,
	`{"wait_ms":"5"}`,
	`{"tool":"a"`,
	``,
	`   `,
	`null`,
	`[]`,
	`{"tool":"\ud800"}`,
	`{"Tool":"case"}`,
	`{"arguments":{"a" : [1, 2 ,{"b":null}]}}`,
	"{\"tool\":\"a\xffb\"}",
}

// TestDecodeJSON_SameAsUnmarshal: every seed, decoded twice in a row
// (through a recycled decoder the second time), gives json.Unmarshal's
// value and error.
func TestDecodeJSON_SameAsUnmarshal(t *testing.T) {
	for round := 0; round < 2; round++ {
		for _, seed := range decodeSeeds {
			sameAsUnmarshal(t, []byte(seed))
		}
	}
}

func sameAsUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	var want, got decodeTarget
	wantErr := json.Unmarshal(data, &want)
	gotErr := DecodeJSON(data, &got)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%q: error %v, json.Unmarshal %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: %+v, json.Unmarshal %+v", data, got, want)
	}
}

// TestDecodeJSON_AllocatesLessThanUnmarshal: the recycled decoder saves
// the allocations it is for.
func TestDecodeJSON_AllocatesLessThanUnmarshal(t *testing.T) {
	data := []byte(decodeSeeds[1])
	unmarshal := testing.AllocsPerRun(100, func() {
		var v decodeTarget
		_ = json.Unmarshal(data, &v)
	})
	decode := testing.AllocsPerRun(100, func() {
		var v decodeTarget
		_ = DecodeJSON(data, &v)
	})
	if decode > unmarshal-2 {
		t.Fatalf("DecodeJSON: %.0f allocations, json.Unmarshal %.0f", decode, unmarshal)
	}
}

func FuzzDecodeJSON_SameAsUnmarshal(f *testing.F) {
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsUnmarshal(t, data)
		sameAsUnmarshal(t, data) // through a decoder the first may have left
	})
}
