package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrActivation is matched (errors.Is) by every *ActivationError.
var ErrActivation = errors.New("policy: activation refused")

// ActivationError refuses to activate a version: Field names the offending
// binding field ("gate_bindings[1].gate_id"). The version stays staged.
type ActivationError struct {
	PolicyID string
	Version  string
	Field    string
	Reason   string
}

func (e *ActivationError) Error() string {
	return fmt.Sprintf("policy: activation of %s@%s refused: %s: %s", e.PolicyID, e.Version, e.Field, e.Reason)
}

func (e *ActivationError) Is(target error) bool { return target == ErrActivation }

// ErrNotActive is matched by every *NotActiveError.
var ErrNotActive = errors.New("policy: bindings can reference only active versions")

// NotActiveError refuses a binding to a version that exists but is staged.
// Field is always "policy_version".
type NotActiveError struct {
	PolicyID string
	Version  string
	Field    string
}

func (e *NotActiveError) Error() string {
	return fmt.Sprintf("policy: invalid %s: %s@%s is staged; bindings can reference only active versions (activate it first)", e.Field, e.PolicyID, e.Version)
}

func (e *NotActiveError) Is(target error) bool { return target == ErrNotActive }

// ErrBindingConflict is matched by every *BindingConflictError.
var ErrBindingConflict = errors.New("policy: binding id already stored with other content")

// BindingConflictError refuses a binding whose id is already stored with
// other content. Bindings, like snapshots, never change.
type BindingConflictError struct {
	BindingID string
}

func (e *BindingConflictError) Error() string {
	return fmt.Sprintf("policy: binding %s already stored with other content", e.BindingID)
}

func (e *BindingConflictError) Is(target error) bool { return target == ErrBindingConflict }

// ErrIntegrity is matched by every *IntegrityError.
var ErrIntegrity = errors.New("policy: stored policy data fails integrity")

// IntegrityError reports stored data that no longer decodes or no longer
// matches its digest or key (a tampered or corrupt record). Field names
// what failed ("digest" when the content was edited, "gate_bindings[0].level"
// when a value became invalid); Err, when set, is the decoding error. The
// data is never returned as valid.
type IntegrityError struct {
	Key      string // the store's key, for an operator to find the record
	PolicyID string
	Version  string
	Field    string
	Reason   string
	Err      error
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("policy: stored record %q fails integrity: %s: %s", e.Key, e.Field, e.Reason)
}

func (e *IntegrityError) Is(target error) bool { return target == ErrIntegrity }

func (e *IntegrityError) Unwrap() error { return e.Err }

// ErrAmbiguousBind is matched by every *AmbiguousBindError.
var ErrAmbiguousBind = errors.New("policy: the scope is bound to another version")

// AmbiguousBindError refuses a binding to a scope (and selector) already
// bound to another policy version: with both stored, resolution at that
// scope would be ambiguous and every task there would fail to open. Bound
// names the versions bound there now and Requested the refused one
// ("policy_id@version"). Unbind the earlier version first to replace it.
type AmbiguousBindError struct {
	Scope, Selector string
	Bound           []string
	Requested       string
}

func (e *AmbiguousBindError) Error() string {
	at := e.Scope
	if e.Selector != "" {
		at += " " + strconv.Quote(e.Selector)
	}
	return fmt.Sprintf("policy: %s is bound to %s; binding %s too would make resolution ambiguous (unbind %s first to replace it)",
		at, strings.Join(e.Bound, ", "), e.Requested, strings.Join(e.Bound, ", "))
}

func (e *AmbiguousBindError) Is(target error) bool { return target == ErrAmbiguousBind }
