package governance

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// fieldsAndMap builds the same payload both ways from one list of
// key/value steps, so a test can compare their canonical bytes.
func fieldsAndMap(steps []any) (*Fields, map[string]any) {
	f, m := NewFields(len(steps)/2), map[string]any{}
	for i := 0; i+1 < len(steps); i += 2 {
		k := steps[i].(string)
		switch v := steps[i+1].(type) {
		case string:
			f.String(k, v)
		case int64:
			f.Int(k, v)
		case bool:
			f.Bool(k, v)
		case uuid.UUID:
			f.UUID(k, v)
		default:
			f.Value(k, v)
		}
		m[k] = steps[i+1]
	}
	return f, m
}

func TestFields_SameBytesAsTheMap(t *testing.T) {
	id := uuid.MustParse("0b9cf3b8-7a64-4e59-9c1e-2f9b8c7d6e5f")
	cases := map[string][]any{
		"empty":             {},
		"gate record":       {"gate_id", "destructive", "level", "hard", "decision", "allow", "reason_code", "", "phase", "check", "argument_digest", "ab", "module_digest", "cd", "duration_us", int64(17)},
		"overwritten key":   {"failure", "error", "tool_id", "bash", "failure", "timeout"},
		"escapes and utf-8": {"q\"uote", "a\\b\n\u0001", "é", "ü\u2028", "", "empty key"},
		"uuid and bool":     {"task_boundary_id", id, "break_glass", true, "exception_ambiguous", false},
		"nested values":     {"fields", []string{"a", "b"}, "approval", map[string]any{"z": int64(1), "a": []any{"x", nil}}, "n", int64(-9)},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			f, m := fieldsAndMap(steps)
			want, err := Canonical(m)
			require.NoError(t, err)
			got, err := Canonical(f)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			require.Equal(t, len(m), f.Len())
		})
	}
}

func TestFields_RefusesWhatTheMapRefuses(t *testing.T) {
	_, err := Canonical(NewFields(1).String("bad", "\xff"))
	require.Error(t, err)
	_, err = Canonical(NewFields(1).Value("f", 1.5))
	var ce *CanonicalError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Path, `["f"]`)
	var nilFields *Fields
	text, err := Canonical(nilFields)
	require.NoError(t, err)
	require.Equal(t, "null", string(text))
}

func FuzzFields_SameBytesAsTheMap(f *testing.F) {
	f.Add("gate_id", "x", "level", int64(3), "gate_id", true)
	f.Add("é", "\"", "", int64(-1), "a\x00", false)
	f.Fuzz(func(t *testing.T, k1, s string, k2 string, n int64, k3 string, b bool) {
		fields, m := fieldsAndMap([]any{k1, s, k2, n, k3, b})
		want, werr := Canonical(m)
		got, gerr := Canonical(fields)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("map err %v, fields err %v", werr, gerr)
		}
		if string(want) != string(got) {
			t.Fatalf("map %s, fields %s", want, got)
		}
	})
}

// Strings writes what Value of the same list writes, errors included: an
// empty and a nil list, escapes, and a string that is not UTF-8.
func TestFields_StringsAsValue(t *testing.T) {
	for _, list := range [][]string{nil, {}, {"command"}, {"a\"b", "é\u2028", "x"}, {"ok", "\xff"}} {
		want, werr := Canonical(NewFields(1).Value("fields", list))
		got, gerr := Canonical(NewFields(1).Strings("fields", list))
		require.Equal(t, werr, gerr, "%q", list)
		require.Equal(t, string(want), string(got), "%q", list)
	}
}
