package abi

import (
	"bytes"
	"errors"
)

// MaxReasonCodeLen bounds GateOutput.ReasonCode.
const MaxReasonCodeLen = 128

// ErrBadReasonCode, ErrBadDecision and ErrBadArguments are returned by
// GateOutput.Validate.
var (
	ErrBadDecision   = errors.New("abi: decision outside allow|deny|require_approval")
	ErrBadReasonCode = errors.New("abi: reason_code empty, too long or not [a-z0-9_.-]")
	ErrBadArguments  = errors.New("abi: arguments present but not a JSON object (or null)")
)

// ValidReasonCode reports whether code is a well-formed reason code: 1 to
// MaxReasonCodeLen bytes of lower-case ASCII letters, digits, '_', '.' and
// '-', starting with a letter or digit.
func ValidReasonCode(code string) bool {
	if code == "" || len(code) > MaxReasonCodeLen {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Validate checks what the host checks on every answer: a decision from the
// closed set, a well-formed reason code and, when present, arguments that
// are a JSON object.
func (o *GateOutput) Validate() error {
	if !o.Decision.Valid() {
		return ErrBadDecision
	}
	if !ValidReasonCode(o.ReasonCode) {
		return ErrBadReasonCode
	}
	if len(o.Arguments) > 0 {
		a := bytes.TrimSpace(o.Arguments)
		if bytes.Equal(a, []byte("null")) {
			return nil
		}
		if len(a) == 0 || a[0] != '{' {
			return ErrBadArguments
		}
	}
	return nil
}
