package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCanon_Vectors runs every reference vector through `govhost canon`.
func TestCanon_Vectors(t *testing.T) {
	f, err := os.Open("testdata/canonical.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var v struct {
			Input     json.RawMessage `json:"input"`
			Canonical string          `json:"canonical"`
			SHA256    string          `json:"sha256"`
			Reject    string          `json:"reject"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		code, stdout, stderr := runCLI(t, string(v.Input), "canon")
		if v.Reject != "" {
			require.Equal(t, exitInvalid, code, "input %s", v.Input)
			require.Contains(t, stderr, "float")
			require.Empty(t, stdout)
		} else {
			require.Equal(t, exitOK, code, stderr)
			require.Equal(t, v.Canonical+"\n"+v.SHA256+"\n", stdout)
		}
		n++
	}
	require.Equal(t, 30, n)
}

func TestCanon_BadInput(t *testing.T) {
	cases := map[string]struct {
		in, want string
		code     int
	}{
		"malformed":       {`{"a":`, "malformed JSON", exitUsage},
		"deep float":      {`{"a":{"b":[1,{"c":2.0}]}}`, `$["a"]["b"][1]["c"]`, exitInvalid},
		"NaN":             {`{"a":NaN}`, "float", exitInvalid},
		"invalid utf8":    {"\"\xff\"", "UTF-8", exitUsage},
		"lone surrogate":  {`"\ud800"`, "surrogate", exitUsage},
		"two values":      {`1 2`, "after the JSON value", exitUsage},
		"extra arguments": {`1`, "usage", exitUsage},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			args := []string{"canon"}
			if name == "extra arguments" {
				args = append(args, "x")
			}
			code, stdout, stderr := runCLI(t, c.in, args...)
			require.Equal(t, c.code, code)
			require.Empty(t, stdout)
			require.True(t, strings.Contains(stderr, c.want), "stderr %q", stderr)
		})
	}
}
