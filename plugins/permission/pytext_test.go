package permission

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

type pytextGolden struct {
	Values []struct {
		JSON string `json:"json"`
		Str  string `json:"str"`
		Repr string `json:"repr"`
	} `json:"values"`
	Numbers []struct {
		Literal string `json:"literal"`
		Str     string `json:"str"`
	} `json:"numbers"`
	Lower []struct {
		Text  string `json:"text"`
		Lower string `json:"lower"`
	} `json:"lower"`
}

// TestPyText_CPythonGolden checks str(), repr() and str.lower() against
// CPython's output (testdata/gen_golden.py).
func TestPyText_CPythonGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/pytext_golden.json")
	require.NoError(t, err)
	var g pytextGolden
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Values)
	for _, c := range g.Values {
		v, err := parseJSON([]byte(c.JSON))
		require.NoError(t, err, c.JSON)
		require.Equal(t, c.Str, pyStr(&v), "str(%s)", c.JSON)
		require.Equal(t, c.Repr, pyRepr(&v), "repr(%s)", c.JSON)
	}
	for _, c := range g.Numbers {
		require.Equal(t, c.Str, pyNumber(c.Literal), "str(json.loads(%q))", c.Literal)
	}
	for _, c := range g.Lower {
		require.Equal(t, c.Lower, pyLower(c.Text), "%q.lower()", c.Text)
	}
}

func TestPyFloatRepr(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{1.5, "1.5"},
		{1e16, "1e+16"},
		{1e15, "1000000000000000.0"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{-2.5e-300, "-2.5e-300"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{0.1, "0.1"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, pyFloatRepr(tt.f), "%v", tt.f)
	}
}

func TestPyQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"a;b", "'a;b'"},
		{"it's", `"it's"`},
		{`"`, `'"'`},
		{`it's "x"`, `'it\'s "x"'`},
		{"a\nb", `'a\nb'`},
		{"2>&1", "'2>&1'"},
		{"\x1b[0m", `'\x1b[0m'`},
		{`C:\x`, `'C:\\x'`},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, pyQuote(tt.in), "%q", tt.in)
	}
}

func TestPyPathStr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/workspace/private.txt", "/workspace/private.txt"},
		{"", "."},
		{"/", "/"},
		{"//", "//"},
		{"///a", "/a"},
		{"//a/b", "//a/b"},
		{"a//b/./c/", "a/b/c"},
		{"./", "."},
		{"a/../b", "a/../b"},
		{"secret", "secret"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, pyPathStr(tt.in), "%q", tt.in)
	}
}
