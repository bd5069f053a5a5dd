package wire

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
)

func TestDecodeOutput_Classifies(t *testing.T) {
	for in, code := range map[string]string{
		`{"decision":"allow","reason_code":"a.b"}`:                   "",
		` {"decision":"deny","reason_code":"a","arguments":null} `:   "",
		`{"decision":"allow","reason_code":"a","arguments":{"x":1}}`: "",
		`{"decision":"maybe","reason_code":"a"}`:                     fault.BadDecision,
		`{"reason_code":"a"}`:                                        fault.BadDecision,
		`{"decision":"allow"}`:                                       fault.BadOutput,
		`{"decision":"allow","reason_code":"Has Spaces"}`:            fault.BadOutput,
		// Readers that could take it two ways: refused (issue 28).
		`{"decision":"deny","reason_code":"a","decision":"allow"}`: fault.BadOutput,
		`{"decision":"deny","reason_code":"a","Decision":"allow"}`: fault.BadOutput,
		`{"decision":"allow","reason_code":"a","REASON_CODE":"b"}`: fault.BadOutput,
		`{"decision":"allow","reason_code":"a","reason_code":"a"}`: fault.BadOutput,
		`{"decision":"allow","reason_code":"a","x_extension":1}`:   "",
		`{"decision":"allow","reason_code":"a","arguments":[1]}`:   fault.BadOutput,
		`{"decision":"allow","reason_code":"a"} trailing`:          fault.BadOutput,
		`null`: fault.BadOutput,
		`[]`:   fault.BadOutput,
		"{\"decision\":\"allow\",\"reason_code\":\"a\",\"detail\":\"\xff\"}":                  fault.BadOutput,
		`{"decision":"allow","reason_code":"a","detail":"` + string(make([]byte, 100)) + `"}`: fault.OutputTooLarge,
	} {
		out, err := DecodeOutput([]byte(in), 100)
		if code == "" {
			require.NoError(t, err, in)
			require.NoError(t, out.Validate())
			continue
		}
		fe, ok := fault.As(err)
		require.True(t, ok, in)
		require.Equal(t, code, fe.Code, in)
		require.Equal(t, abi.GateOutput{}, out)
	}
}

func TestEncoder_Reuse(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	a, err := e.Encode(&abi.GateInput{Tool: "a"})
	require.NoError(t, err)
	require.Contains(t, string(a), `"tool":"a"`)
	b, err := e.Encode(&abi.GateInput{Tool: "b"})
	require.NoError(t, err)
	require.Contains(t, string(b), `"tool":"b"`)
}
