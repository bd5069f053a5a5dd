package permission

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("permission: invalid configuration")

// Kinds of configuration error, matched with errors.Is on a *ConfigError.
var (
	// ErrSyntax: the configuration is not JSON.
	ErrSyntax = errors.New("permission: configuration is not valid JSON")
	// ErrFamily: the configuration names no family, or more than one.
	ErrFamily = errors.New("permission: configuration must name exactly one family")
	// ErrWrongType: a field has the wrong JSON type.
	ErrWrongType = errors.New("permission: wrong type")
	// ErrUnknownField: an object holds a field the schema does not define.
	ErrUnknownField = errors.New("permission: unknown field")
	// ErrUnknownPreset: a LionAGI preset name is not one of allow_all,
	// deny_all, read_only, safe.
	ErrUnknownPreset = errors.New("permission: unknown preset")
	// ErrInvalidGrants: a grant string holds entries the grammar rejects;
	// ConfigError.Entries lists all of them.
	ErrInvalidGrants = errors.New("permission: invalid grant entries")
	// ErrUnknownOperation: an operation name is not one of AgentLane's eight.
	ErrUnknownOperation = errors.New("permission: unknown operation")
	// ErrBadValue: a field holds a value outside its documented set.
	ErrBadValue = errors.New("permission: unsupported value")
	// ErrConflict: two fields that exclude each other are both set.
	ErrConflict = errors.New("permission: conflicting fields")
)

// ConfigError describes one problem in a configuration.
type ConfigError struct {
	// Field is the JSON path of the offending field ("lionagi.deny.bash[1]",
	// "agentlane.grants"); empty for the document itself.
	Field string
	// Kind is one of the Err* kinds above.
	Kind error
	// Detail says what is wrong in words.
	Detail string
	// Entries lists every rejected grant entry, trimmed and lower-cased as
	// AgentLane reports them (Kind ErrInvalidGrants only).
	Entries []string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("permission: config")
	if e.Field != "" {
		fmt.Fprintf(&b, " field %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Detail)
	return b.String()
}

// Unwrap lets errors.Is match both ErrConfig and the error's Kind.
func (e *ConfigError) Unwrap() []error { return []error{e.Kind, ErrConfig} }

func configErr(field string, kind error, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

func wrongType(field string, want string, got *value) *ConfigError {
	return configErr(field, ErrWrongType, "must be %s, not %s", want, got.kind)
}
