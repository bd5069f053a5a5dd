package abi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDisplayText(t *testing.T) {
	require.Equal(t, "cgate 1.0.0: a gate, écrit en C", DisplayText("cgate 1.0.0: a gate, écrit en C"))
	for in, want := range map[string]string{
		"x\x1b[2Jy":                     `"x\x1b[2Jy"`,
		"ok\nresult:   valid gate":      `"ok\nresult:   valid gate"`,
		"a\rb":                          `"a\rb"`,
		"left\u202eright":               `"left\u202eright"`,
		"bad\xffutf8":                   `"bad\xffutf8"`,
		`back\slash`:                    `"back\\slash"`,
		`say "hi"`:                      `"say \"hi\""`,
		"\u009b31m c1 control sequence": `"\u009b31m c1 control sequence"`,
	} {
		require.Equal(t, want, DisplayText(in), "%q", in)
	}
}
