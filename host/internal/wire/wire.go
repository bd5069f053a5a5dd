// Package wire encodes GateInput documents for guests and decodes and
// checks the GateOutput documents they answer with, with abi's
// reflection-free codec.
package wire

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
)

// Encoder is a reusable GateInput encoder. Not safe for concurrent use; get
// one from GetEncoder.
type Encoder struct{ buf []byte }

var encoders = sync.Pool{New: func() any { return &Encoder{buf: make([]byte, 0, 1024)} }}

// GetEncoder returns an encoder from a process-wide pool; PutEncoder it
// when the bytes it returned are no longer used.
func GetEncoder() *Encoder { return encoders.Get().(*Encoder) }

// PutEncoder returns e to the pool.
func PutEncoder(e *Encoder) {
	if cap(e.buf) > 1<<20 {
		return // do not keep huge buffers alive
	}
	encoders.Put(e)
}

// Encode returns the JSON of in, valid until the next Encode or PutEncoder.
func (e *Encoder) Encode(in *abi.GateInput) ([]byte, error) {
	b, err := abi.AppendGateInput(e.buf[:0], in)
	e.buf = b
	return b, err
}

// DecodeOutput decodes and checks a guest's answer. b may be a view of
// guest memory: nothing of it is retained. The error is a guest failure
// with a stable code and no guest text.
func DecodeOutput(b []byte, maxLen int) (abi.GateOutput, error) {
	var out abi.GateOutput
	if len(b) > maxLen {
		return out, fault.New(fault.OutputTooLarge, "evaluate", "output exceeds the host's cap")
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return out, fault.New(fault.BadOutput, "evaluate", "output is not a JSON object")
	}
	if !utf8.Valid(b) {
		return out, fault.New(fault.BadOutput, "evaluate", "output is not UTF-8")
	}
	if err := abi.DecodeGateOutput(b, &out); err != nil {
		return abi.GateOutput{}, fault.New(fault.BadOutput, "evaluate", "output is not a GateOutput JSON document")
	}
	switch err := out.Validate(); err {
	case nil:
	case abi.ErrBadDecision:
		return abi.GateOutput{}, fault.New(fault.BadDecision, "evaluate", "decision outside the closed set")
	default:
		return abi.GateOutput{}, fault.New(fault.BadOutput, "evaluate", err.Error())
	}
	if len(out.Arguments) == 0 || bytes.Equal(out.Arguments, []byte("null")) {
		out.Arguments = nil
	} else {
		// NB: Arguments aliases the decoder's private copy; hand the caller
		// its own slice so that it may modify it.
		out.Arguments = append([]byte(nil), out.Arguments...)
	}
	return out, nil
}
