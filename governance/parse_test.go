package governance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseObjectTwoPasses is what ParseObject replaces: ParseJSON for the
// value, then ObjectMembers for the key order.
func parseObjectTwoPasses(data []byte) (map[string]any, []string, error) {
	v, err := parseJSONSlow(data) // encoding/json: the reference
	if err != nil {
		return nil, nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, ErrNotObject
	}
	members, err := ObjectMembers(data)
	if err != nil {
		return nil, nil, err
	}
	order := []string{}
	for _, m := range members {
		order = append(order, m.Key)
	}
	return obj, order, nil
}

var parseObjectSeeds = []string{
	`{}`, ` { } `, `{"b":1,"a":[1,{"x":null}],"b":"last"}`, `{"command":"ls -la","cwd":"/tmp"}`,
	`{"n":12345678901234567890123}`, `{"f":1.5}`, `{"x":NaN}`, `{"x":Infinity}`, `[1,2]`, `"s"`, `3`,
	`null`, `{"a":1}{"b":2}`, `{"a":1} x`, `{"a":`, `{"a" 1}`, `{1:2}`, `{"\ud800":1}`, "{\"\xff\":1}",
	`{"é":"ü","a\u0000":"\n"}`, ``, `   `, `{"a":1,}`, `{,"a":1}`,
}

func TestParseObject_SameAsParseJSONAndObjectMembers(t *testing.T) {
	for _, in := range parseObjectSeeds {
		t.Run(in, func(t *testing.T) {
			wantObj, wantOrder, wantErr := parseObjectTwoPasses([]byte(in))
			obj, order, err := ParseObject([]byte(in))
			if wantErr != nil {
				require.Error(t, err)
				require.Equal(t, wantErr.Error(), err.Error())
				require.Equal(t, errors.Is(wantErr, ErrNotObject), errors.Is(err, ErrNotObject))
				return
			}
			require.NoError(t, err)
			require.Equal(t, wantObj, obj)
			if len(wantOrder) == 0 {
				require.Empty(t, order)
				return
			}
			require.Equal(t, wantOrder, order)
		})
	}
}

func FuzzParseObject(f *testing.F) {
	for _, s := range parseObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wantObj, wantOrder, wantErr := parseObjectTwoPasses(data)
		obj, order, err := ParseObject(data)
		if (wantErr == nil) != (err == nil) {
			t.Fatalf("two passes err %v, one pass err %v", wantErr, err)
		}
		if wantErr != nil {
			if errors.Is(wantErr, ErrNotObject) != errors.Is(err, ErrNotObject) {
				t.Fatalf("two passes err %v, one pass err %v", wantErr, err)
			}
			return
		}
		require.Equal(t, wantObj, obj)
		require.Equal(t, len(wantOrder), len(order))
		for i := range order {
			require.Equal(t, wantOrder[i], order[i])
		}
	})
}
