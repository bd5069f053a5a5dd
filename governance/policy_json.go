package governance

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/google/uuid"
)

// The wire forms of the policy types. Fields follow ADR-0087 D5's order,
// then the binding's additions (module_digest, config, transform). Absent
// values are null, times are TimeLayout, and decoding is strict: unknown
// fields, missing fields and invalid values are refused with a
// *ValidationError naming the field, and a snapshot whose digest does not
// match its content is refused (Field "digest"). Encoding then decoding a
// value gives an equal value, and encoding again gives the same bytes.

type gateBindingJSON struct {
	GateID       *string   `json:"gate_id"`
	AdapterID    *string   `json:"adapter_id"`
	Level        *string   `json:"level"`
	Order        *int      `json:"order"`
	ToolIDs      *[]string `json:"tool_ids"`
	ModuleDigest *string   `json:"module_digest"`
	Config       *string   `json:"config"`
	Transform    *bool     `json:"transform"`
}

type snapshotJSON struct {
	PolicyID     *uuid.UUID         `json:"policy_id"`
	Version      *string            `json:"version"`
	Digest       *string            `json:"digest"`
	GateBindings *[]gateBindingJSON `json:"gate_bindings"`
	ReleaseState *string            `json:"release_state"`
	ActivatedAt  *string            `json:"activated_at"`
	ActivatedBy  *ActorRef          `json:"activated_by"`
}

type policyBindingJSON struct {
	BindingID     *uuid.UUID `json:"binding_id"`
	Scope         *string    `json:"scope"`
	Selector      *string    `json:"selector"`
	PolicyID      *uuid.UUID `json:"policy_id"`
	PolicyVersion *string    `json:"policy_version"`
	CreatedAt     *string    `json:"created_at"`
}

func (b ExecutableGateBinding) wire() gateBindingJSON {
	level := string(b.level)
	order := b.order
	tools := b.toolIDs
	if tools == nil {
		tools = []string{}
	}
	return gateBindingJSON{
		GateID: &b.gateID, AdapterID: &b.adapterID, Level: &level, Order: &order, ToolIDs: &tools,
		ModuleDigest: &b.moduleDigest, Config: &b.config, Transform: &b.transform,
	}
}

// MarshalJSON writes the binding's wire form.
func (b ExecutableGateBinding) MarshalJSON() ([]byte, error) { return marshalPolicyJSON(b.wire()) }

// UnmarshalJSON reads a binding strictly (see NewExecutableGateBinding).
func (b *ExecutableGateBinding) UnmarshalJSON(data []byte) error {
	var w gateBindingJSON
	if err := decodePolicyJSON(data, &w, "gate_binding"); err != nil {
		return err
	}
	out, err := w.binding("")
	if err != nil {
		return err
	}
	*b = out
	return nil
}

func (w gateBindingJSON) binding(prefix string) (ExecutableGateBinding, error) {
	missing := func(name string) error { return &ValidationError{Field: prefix + name, Reason: "is required"} }
	switch {
	case w.GateID == nil:
		return ExecutableGateBinding{}, missing("gate_id")
	case w.AdapterID == nil:
		return ExecutableGateBinding{}, missing("adapter_id")
	case w.Level == nil:
		return ExecutableGateBinding{}, missing("level")
	case w.Order == nil:
		return ExecutableGateBinding{}, missing("order")
	case w.ToolIDs == nil:
		return ExecutableGateBinding{}, missing("tool_ids")
	case w.ModuleDigest == nil:
		return ExecutableGateBinding{}, missing("module_digest")
	case w.Config == nil || *w.Config == "":
		return ExecutableGateBinding{}, missing("config")
	case w.Transform == nil:
		return ExecutableGateBinding{}, missing("transform")
	}
	return newGateBinding(GateBindingSpec{
		GateID: *w.GateID, AdapterID: *w.AdapterID, Level: GateLevel(*w.Level), Order: *w.Order,
		ToolIDs: *w.ToolIDs, ModuleDigest: *w.ModuleDigest, Config: *w.Config, Transform: *w.Transform,
	}, prefix)
}

// MarshalJSON writes the snapshot's wire form, bindings in evaluation order.
func (s PolicySnapshot) MarshalJSON() ([]byte, error) {
	bindings := make([]gateBindingJSON, len(s.bindings))
	for i, b := range s.bindings {
		bindings[i] = b.wire()
	}
	state := string(s.releaseState)
	w := snapshotJSON{
		PolicyID: &s.policyID, Version: &s.version, Digest: &s.digest, GateBindings: &bindings,
		ReleaseState: &state, ActivatedBy: s.activatedBy,
	}
	if !s.activatedAt.IsZero() {
		t := FormatTime(s.activatedAt)
		w.ActivatedAt = &t
	}
	return marshalPolicyJSON(w)
}

// UnmarshalJSON reads a snapshot strictly and recomputes its digest: a
// stored digest that no longer matches the content is a *ValidationError
// with Field "digest".
func (s *PolicySnapshot) UnmarshalJSON(data []byte) error {
	var w snapshotJSON
	if err := decodePolicyJSON(data, &w, "policy_snapshot"); err != nil {
		return err
	}
	switch {
	case w.PolicyID == nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case w.Version == nil:
		return &ValidationError{Field: "version", Reason: "is required"}
	case w.Digest == nil:
		return &ValidationError{Field: "digest", Reason: "is required"}
	case w.GateBindings == nil:
		return &ValidationError{Field: "gate_bindings", Reason: "is required"}
	case w.ReleaseState == nil:
		return &ValidationError{Field: "release_state", Reason: "is required"}
	}
	bindings := make([]ExecutableGateBinding, len(*w.GateBindings))
	for i, wb := range *w.GateBindings {
		b, err := wb.binding("gate_bindings[" + strconv.Itoa(i) + "].")
		if err != nil {
			return err
		}
		bindings[i] = b
	}
	out, err := NewPolicySnapshot(*w.PolicyID, *w.Version, bindings)
	if err != nil {
		return err
	}
	if !IsDigest(*w.Digest) {
		return &ValidationError{Field: "digest", Reason: "must be 64 lowercase hex characters"}
	}
	computed := out.digest
	switch PolicyReleaseState(*w.ReleaseState) {
	case Staged:
		if w.ActivatedAt != nil {
			return &ValidationError{Field: "activated_at", Reason: "must be null for a staged snapshot"}
		}
		if w.ActivatedBy != nil {
			return &ValidationError{Field: "activated_by", Reason: "must be null for a staged snapshot"}
		}
	case Active:
		if w.ActivatedAt == nil {
			return &ValidationError{Field: "activated_at", Reason: "is required for an active snapshot"}
		}
		at, err := ParseTime("activated_at", *w.ActivatedAt)
		if err != nil {
			return err
		}
		if out, err = out.Activated(at, w.ActivatedBy); err != nil {
			return err
		}
	default:
		return &ValidationError{Field: "release_state", Reason: "unknown value " + strconv.Quote(*w.ReleaseState) + " (want staged or active)"}
	}
	// NB: compared last, so a document that is not a well-formed snapshot
	// is refused as such, and a digest mismatch means exactly that.
	if *w.Digest != computed {
		return &PolicyDigestError{ValidationError{Field: "digest", Reason: "stored digest " + *w.Digest + " does not match the content (computed " + computed + ")"}}
	}
	*s = out
	return nil
}

// PolicyDigestError: a well-formed snapshot document whose stored digest
// does not recompute from its content (it was changed). It is also a
// *ValidationError with Field "digest".
type PolicyDigestError struct{ ValidationError }

func (e *PolicyDigestError) Unwrap() error { return &e.ValidationError }

// MarshalJSON writes the binding's wire form, selector null when "".
func (b PolicyBinding) MarshalJSON() ([]byte, error) {
	scope := string(b.Scope)
	created := FormatTime(b.CreatedAt)
	w := policyBindingJSON{
		BindingID: &b.BindingID, Scope: &scope, PolicyID: &b.PolicyID,
		PolicyVersion: &b.PolicyVersion, CreatedAt: &created,
	}
	if b.Selector != "" {
		w.Selector = &b.Selector
	}
	return marshalPolicyJSON(w)
}

// UnmarshalJSON reads a binding strictly; selector must be present (null
// for global).
func (b *PolicyBinding) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return &ValidationError{Field: "policy_binding", Reason: err.Error()}
	}
	if _, ok := raw["selector"]; !ok {
		return &ValidationError{Field: "selector", Reason: "is required (null for scope global)"}
	}
	var w policyBindingJSON
	if err := decodePolicyJSON(data, &w, "policy_binding"); err != nil {
		return err
	}
	switch {
	case w.BindingID == nil:
		return &ValidationError{Field: "binding_id", Reason: "is required"}
	case w.Scope == nil:
		return &ValidationError{Field: "scope", Reason: "is required"}
	case w.PolicyID == nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case w.PolicyVersion == nil:
		return &ValidationError{Field: "policy_version", Reason: "is required"}
	case w.CreatedAt == nil:
		return &ValidationError{Field: "created_at", Reason: "is required"}
	case w.Selector != nil && *w.Selector == "":
		return &ValidationError{Field: "selector", Reason: "must be null or nonempty"}
	}
	created, err := ParseTime("created_at", *w.CreatedAt)
	if err != nil {
		return err
	}
	out := PolicyBinding{
		BindingID: *w.BindingID, Scope: PolicyScope(*w.Scope), PolicyID: *w.PolicyID,
		PolicyVersion: *w.PolicyVersion, CreatedAt: created,
	}
	if w.Selector != nil {
		out.Selector = *w.Selector
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*b = out
	return nil
}

// policyKeys are every key of the policy wire forms (snapshot, gate
// binding, actor, policy binding).
var policyKeys = []string{
	"policy_id", "version", "digest", "gate_bindings", "release_state", "activated_at", "activated_by",
	"gate_id", "adapter_id", "level", "order", "tool_ids", "module_digest", "config", "transform",
	"kind", "id", "binding_id", "scope", "selector", "policy_version", "created_at",
}

// policyShape holds every object of a policy form, at any depth, to
// policyKeys.
var policyShape = KeysAtAnyDepth(policyKeys)

func decodePolicyJSON(data []byte, v any, field string) error {
	if err := checkExactKeys(data, field, policyShape); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return ve
		}
		return &ValidationError{Field: field, Reason: err.Error()}
	}
	if dec.More() {
		return &ValidationError{Field: field, Reason: "unexpected data after the JSON value"}
	}
	return nil
}

func marshalPolicyJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
