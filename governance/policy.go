package governance

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Policy snapshots (ADR-0087 D5 and DESIGN.md "Module integrity").
//
// Why unexported fields? ExecutableGateBinding and PolicySnapshot hold
// slices. To stay frozen they keep every field unexported, are built only by
// their constructors (which validate and copy in) and hand slices out as
// copies. The zero value of either is invalid and refused by every store.
// PolicyBinding holds no slice: its fields are exported, NewPolicyBinding
// validates them, and stores validate again.

// GateBindingSpec is the input of NewExecutableGateBinding, and what Spec
// returns: a plain, mutable description of one gate binding.
type GateBindingSpec struct {
	GateID    string    // stable gate id, nonempty; unique within an active snapshot
	AdapterID string    // the adapter that runs the gate, nonempty; must be available at activation
	Level     GateLevel // hard, soft or advisory
	Order     int       // evaluation order, >= 0; unique within an active snapshot
	ToolIDs   []string  // the tools the gate applies to; nonempty ids; nonempty set at activation

	// ModuleDigest is the sha256 (64 lowercase hex) of the gate's .wasm
	// bytes. It pins the exact code that decides.
	ModuleDigest string

	// Config is the gate's configuration as canonical JSON text (see
	// Canonical). "" means no configuration and is stored as "{}".
	Config string

	// Transform marks a gate whose returned arguments the controller
	// honours (a user transform); every other gate is a check.
	Transform bool
}

// ExecutableGateBinding binds one gate (its module, config and level) to a
// set of tools inside a policy snapshot. It is frozen: build it with
// NewExecutableGateBinding; ToolIDs and Spec return copies.
type ExecutableGateBinding struct {
	gateID       string
	adapterID    string
	level        GateLevel
	order        int
	toolIDs      []string
	moduleDigest string
	config       string
	transform    bool
}

// NewExecutableGateBinding validates spec and returns a frozen binding that
// owns a copy of spec.ToolIDs. Set-level rules (nonempty tool set, unique
// gate ids and orders within a snapshot, availability) are activation's
// (ADR-0087 D5), not the constructor's. Errors are *ValidationError.
func NewExecutableGateBinding(spec GateBindingSpec) (ExecutableGateBinding, error) {
	return newGateBinding(spec, "")
}

func newGateBinding(spec GateBindingSpec, prefix string) (ExecutableGateBinding, error) {
	f := func(name string) string { return prefix + name }
	switch {
	case spec.GateID == "" || !utf8.ValidString(spec.GateID):
		return ExecutableGateBinding{}, &ValidationError{Field: f("gate_id"), Reason: "must be a nonempty UTF-8 string"}
	case spec.AdapterID == "" || !utf8.ValidString(spec.AdapterID):
		return ExecutableGateBinding{}, &ValidationError{Field: f("adapter_id"), Reason: "must be a nonempty UTF-8 string"}
	case !spec.Level.Valid():
		return ExecutableGateBinding{}, &ValidationError{Field: f("level"), Reason: fmt.Sprintf("unknown value %q (want one of %v)", spec.Level, gateLevels)}
	case spec.Order < 0:
		return ExecutableGateBinding{}, &ValidationError{Field: f("order"), Reason: "must be >= 0"}
	}
	for i, id := range spec.ToolIDs {
		if id == "" || !utf8.ValidString(id) {
			return ExecutableGateBinding{}, &ValidationError{Field: f("tool_ids[" + strconv.Itoa(i) + "]"), Reason: "must be a nonempty UTF-8 string"}
		}
	}
	if !IsDigest(spec.ModuleDigest) {
		return ExecutableGateBinding{}, &ValidationError{Field: f("module_digest"), Reason: "must be 64 lowercase hex characters"}
	}
	config := spec.Config
	if config == "" {
		config = "{}"
	}
	if err := checkCanonicalConfig(config); err != nil {
		return ExecutableGateBinding{}, &ValidationError{Field: f("config"), Reason: err.Error()}
	}
	var tools []string // NB: nil for an empty set, so equal bindings are deeply equal
	if len(spec.ToolIDs) > 0 {
		tools = slices.Clone(spec.ToolIDs)
	}
	return ExecutableGateBinding{
		gateID:       spec.GateID,
		adapterID:    spec.AdapterID,
		level:        spec.Level,
		order:        spec.Order,
		toolIDs:      tools,
		moduleDigest: spec.ModuleDigest,
		config:       config,
		transform:    spec.Transform,
	}, nil
}

// checkCanonicalConfig accepts text only if it is the canonical encoding of
// an approved JSON value.
func checkCanonicalConfig(text string) error {
	v, err := ParseJSON([]byte(text))
	if err != nil {
		return err
	}
	canon, err := Canonical(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(canon, []byte(text)) {
		return fmt.Errorf("is not in canonical form (want %s)", canon)
	}
	return nil
}

// GateID returns the stable gate id.
func (b ExecutableGateBinding) GateID() string { return b.gateID }

// AdapterID returns the id of the adapter that runs the gate.
func (b ExecutableGateBinding) AdapterID() string { return b.adapterID }

// Level returns how a deny of this gate is enforced.
func (b ExecutableGateBinding) Level() GateLevel { return b.level }

// Order returns the evaluation order (>= 0).
func (b ExecutableGateBinding) Order() int { return b.order }

// ToolIDs returns a copy of the tool ids the gate applies to.
func (b ExecutableGateBinding) ToolIDs() []string { return slices.Clone(b.toolIDs) }

// AnyTool, as a binding's tool id, applies the gate to every tool: the
// default coding-agent policy binds its gates to it so that a tool no
// front end knows (an agent's new tool, any MCP server's) is still
// governed, and asked about, rather than denied policy.no_gate_binding.
const AnyTool = "*"

// AppliesTo reports whether the binding lists toolID or AnyTool. It does
// not allocate.
func (b ExecutableGateBinding) AppliesTo(toolID string) bool {
	for _, id := range b.toolIDs {
		if id == toolID || id == AnyTool {
			return true
		}
	}
	return false
}

// ModuleDigest returns the sha256 of the gate module's bytes.
func (b ExecutableGateBinding) ModuleDigest() string { return b.moduleDigest }

// Config returns the gate's configuration as canonical JSON text.
func (b ExecutableGateBinding) Config() string { return b.config }

// Transform reports whether the controller honours the arguments the gate
// returns.
func (b ExecutableGateBinding) Transform() bool { return b.transform }

// Spec returns a mutable copy of the binding's fields.
func (b ExecutableGateBinding) Spec() GateBindingSpec {
	return GateBindingSpec{
		GateID: b.gateID, AdapterID: b.adapterID, Level: b.level, Order: b.order,
		ToolIDs: slices.Clone(b.toolIDs), ModuleDigest: b.moduleDigest, Config: b.config, Transform: b.transform,
	}
}

// digestValue is the binding's entry in the snapshot digest input.
func (b ExecutableGateBinding) digestValue() map[string]any {
	tools := b.toolIDs
	if tools == nil {
		tools = []string{}
	}
	return map[string]any{
		"adapter_id":    b.adapterID,
		"config":        b.config,
		"gate_id":       b.gateID,
		"level":         string(b.level),
		"module_digest": b.moduleDigest,
		"order":         b.order,
		"tool_ids":      tools,
		"transform":     b.transform,
	}
}

// PolicySnapshot is one immutable policy version: its executable gate
// bindings, their digest, and the release-state projection (staged, or
// active since ActivatedAt by ActivatedBy). It is frozen: build it with
// NewPolicySnapshot (staged) and Activated (the active projection).
type PolicySnapshot struct {
	policyID     uuid.UUID
	version      string
	digest       string
	bindings     []ExecutableGateBinding
	releaseState PolicyReleaseState
	activatedAt  time.Time
	activatedBy  *ActorRef
}

// NewPolicySnapshot returns the staged snapshot of policyID at version.
//
// The bindings are copied and sorted by Order (a stable sort: equal orders
// keep their given sequence, and activation refuses them anyway), so
// GateBindings returns them in evaluation order and two snapshots that list
// the same bindings in another sequence have the same digest. The digest is
// PolicySnapshotDigest of the result. Errors are *ValidationError naming the
// field ("gate_bindings[2].level"; the index is the given position).
func NewPolicySnapshot(policyID uuid.UUID, version string, bindings []ExecutableGateBinding) (PolicySnapshot, error) {
	if err := checkPolicyRef(policyID, version); err != nil {
		return PolicySnapshot{}, err
	}
	for i, b := range bindings {
		// NB: re-validating catches a zero ExecutableGateBinding{}.
		if _, err := newGateBinding(b.Spec(), "gate_bindings["+strconv.Itoa(i)+"]."); err != nil {
			return PolicySnapshot{}, err
		}
	}
	sorted := sortedBindings(bindings)
	digest, err := snapshotDigest(policyID, version, sorted)
	if err != nil {
		return PolicySnapshot{}, err
	}
	return PolicySnapshot{policyID: policyID, version: version, digest: digest, bindings: sorted, releaseState: Staged}, nil
}

func checkPolicyRef(policyID uuid.UUID, version string) error {
	if policyID == uuid.Nil {
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	}
	if version == "" || !utf8.ValidString(version) {
		return &ValidationError{Field: "version", Reason: "must be a nonempty UTF-8 string"}
	}
	return nil
}

// sortedBindings returns a deep copy of bindings in Order (stable).
func sortedBindings(bindings []ExecutableGateBinding) []ExecutableGateBinding {
	out := make([]ExecutableGateBinding, len(bindings))
	for i, b := range bindings {
		b.toolIDs = slices.Clone(b.toolIDs)
		out[i] = b
	}
	slices.SortStableFunc(out, func(a, b ExecutableGateBinding) int { return a.order - b.order })
	return out
}

// PolicySnapshotDigest returns the digest NewPolicySnapshot gives a snapshot
// of these bindings: the sha256-v1 CanonicalDigest of
//
//	{"policy_id": "<uuid>", "version": "<version>",
//	 "gate_bindings": [{"gate_id", "adapter_id", "level", "order",
//	                    "tool_ids": [...], "module_digest",
//	                    "config": "<canonical JSON text, as a string>",
//	                    "transform": bool}, ...]}
//
// with gate_bindings sorted by order (stable) and tool_ids in their given
// sequence. Release state and activation data are not covered: activation
// never changes the digest.
func PolicySnapshotDigest(policyID uuid.UUID, version string, bindings []ExecutableGateBinding) (string, error) {
	return snapshotDigest(policyID, version, sortedBindings(bindings))
}

// PolicySnapshotDigestInput returns the canonical text PolicySnapshotDigest
// hashes, for inspection and cross-language checks.
func PolicySnapshotDigestInput(policyID uuid.UUID, version string, bindings []ExecutableGateBinding) ([]byte, error) {
	return Canonical(digestMap(policyID, version, sortedBindings(bindings)))
}

func snapshotDigest(policyID uuid.UUID, version string, sorted []ExecutableGateBinding) (string, error) {
	_, digest, err := CanonicalDigest(digestMap(policyID, version, sorted))
	return digest, err
}

func digestMap(policyID uuid.UUID, version string, sorted []ExecutableGateBinding) map[string]any {
	gates := make([]any, len(sorted))
	for i, b := range sorted {
		gates[i] = b.digestValue()
	}
	return map[string]any{"policy_id": policyID, "version": version, "gate_bindings": gates}
}

// Activated returns the active projection of a staged snapshot: the same
// executable content and digest, release state active, activated at at
// (normalized to UTC microseconds) by actor (optional, copied). It refuses
// a snapshot that is not staged. Stores call it after activation's checks;
// it does not check availability or set rules itself.
func (s PolicySnapshot) Activated(at time.Time, actor *ActorRef) (PolicySnapshot, error) {
	if s.releaseState != Staged {
		return PolicySnapshot{}, &ValidationError{Field: "release_state", Reason: fmt.Sprintf("only a staged snapshot can be activated (is %q)", s.releaseState)}
	}
	t, err := NormalizeTime("activated_at", at)
	if err != nil {
		return PolicySnapshot{}, err
	}
	out := s
	out.bindings = sortedBindings(s.bindings)
	out.releaseState = Active
	out.activatedAt = t
	if actor != nil {
		if err := actor.Validate(); err != nil {
			return PolicySnapshot{}, &ValidationError{Field: "activated_by", Reason: err.Error()}
		}
		a := *actor
		out.activatedBy = &a
	}
	return out, nil
}

// Validate checks every invariant of a snapshot, recomputing its digest: a
// zero or hand-assembled value fails. Errors are *ValidationError.
func (s PolicySnapshot) Validate() error {
	if err := checkPolicyRef(s.policyID, s.version); err != nil {
		return err
	}
	for i, b := range s.bindings {
		if _, err := newGateBinding(b.Spec(), "gate_bindings["+strconv.Itoa(i)+"]."); err != nil {
			return err
		}
		if i > 0 && s.bindings[i-1].order > b.order {
			return &ValidationError{Field: "gate_bindings[" + strconv.Itoa(i) + "].order", Reason: "bindings are not sorted by order"}
		}
	}
	want, err := snapshotDigest(s.policyID, s.version, s.bindings)
	if err != nil {
		return err
	}
	if s.digest != want {
		return &ValidationError{Field: "digest", Reason: fmt.Sprintf("%q does not match the content (computed %s)", s.digest, want)}
	}
	switch s.releaseState {
	case Staged:
		if !s.activatedAt.IsZero() || s.activatedBy != nil {
			return &ValidationError{Field: "activated_at", Reason: "a staged snapshot has no activation data"}
		}
	case Active:
		if s.activatedAt.IsZero() {
			return &ValidationError{Field: "activated_at", Reason: "is required for an active snapshot"}
		}
		if s.activatedAt.Location() != time.UTC || s.activatedAt.Nanosecond()%1000 != 0 {
			return &ValidationError{Field: "activated_at", Reason: "must be UTC with at most microsecond precision"}
		}
		if s.activatedBy != nil {
			if err := s.activatedBy.Validate(); err != nil {
				return &ValidationError{Field: "activated_by", Reason: err.Error()}
			}
		}
	default:
		return &ValidationError{Field: "release_state", Reason: fmt.Sprintf("unknown value %q", s.releaseState)}
	}
	return nil
}

// PolicyID returns the policy's id.
func (s PolicySnapshot) PolicyID() uuid.UUID { return s.policyID }

// Version returns the policy version.
func (s PolicySnapshot) Version() string { return s.version }

// Digest returns the snapshot digest (see PolicySnapshotDigest).
func (s PolicySnapshot) Digest() string { return s.digest }

// GateBindings returns a copy of the bindings in evaluation order.
func (s PolicySnapshot) GateBindings() []ExecutableGateBinding { return sortedBindings(s.bindings) }

// NumGateBindings returns the number of bindings.
func (s PolicySnapshot) NumGateBindings() int { return len(s.bindings) }

// GateBinding returns the i-th binding in evaluation order without copying
// the others; it panics if i is out of range, like a slice index. It is
// the controller's per-call path, so it copies nothing: a binding's tool
// list is never written after construction and leaves it only as a copy
// (ToolIDs, Spec).
func (s PolicySnapshot) GateBinding(i int) ExecutableGateBinding { return s.bindings[i] }

// ReleaseState returns staged or active.
func (s PolicySnapshot) ReleaseState() PolicyReleaseState { return s.releaseState }

// IsActive reports whether the snapshot is the active projection.
func (s PolicySnapshot) IsActive() bool { return s.releaseState == Active }

// ActivatedAt returns the activation time, or the zero time when staged.
func (s PolicySnapshot) ActivatedAt() time.Time { return s.activatedAt }

// ActivatedBy returns a copy of the activating actor and whether one was
// recorded.
func (s PolicySnapshot) ActivatedBy() (ActorRef, bool) {
	if s.activatedBy == nil {
		return ActorRef{}, false
	}
	return *s.activatedBy, true
}

// Ref returns "policy_id@version", the form errors and logs name a
// snapshot by.
func (s PolicySnapshot) Ref() string { return s.policyID.String() + "@" + s.version }

// PolicyBinding routes operations to one active policy version by scope:
// GLOBAL with no selector, ROLE or RESOURCE with a nonempty selector (a
// routing label, not an authenticated identity). It holds no slice, so its
// fields are exported; build it with NewPolicyBinding, and stores validate
// it again. Selector "" is None (null in JSON).
type PolicyBinding struct {
	BindingID     uuid.UUID
	Scope         PolicyScope
	Selector      string
	PolicyID      uuid.UUID
	PolicyVersion string
	CreatedAt     time.Time
}

// NewPolicyBinding validates b and returns it with CreatedAt normalized to
// UTC microseconds. Errors are *ValidationError.
func NewPolicyBinding(b PolicyBinding) (PolicyBinding, error) {
	t, err := NormalizeTime("created_at", b.CreatedAt)
	if err != nil {
		return PolicyBinding{}, err
	}
	b.CreatedAt = t
	if err := b.Validate(); err != nil {
		return PolicyBinding{}, err
	}
	return b, nil
}

// Validate checks the binding's fields and the scope/selector rule.
func (b PolicyBinding) Validate() error {
	switch {
	case b.BindingID == uuid.Nil:
		return &ValidationError{Field: "binding_id", Reason: "is required"}
	case !b.Scope.Valid():
		return &ValidationError{Field: "scope", Reason: fmt.Sprintf("unknown value %q (want one of %v)", b.Scope, policyScopes)}
	case b.Scope == ScopeGlobal && b.Selector != "":
		return &ValidationError{Field: "selector", Reason: "must be null for scope global"}
	case b.Scope != ScopeGlobal && b.Selector == "":
		return &ValidationError{Field: "selector", Reason: fmt.Sprintf("is required for scope %s", b.Scope)}
	case !utf8.ValidString(b.Selector):
		return &ValidationError{Field: "selector", Reason: "must be valid UTF-8"}
	case b.PolicyID == uuid.Nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case b.PolicyVersion == "" || !utf8.ValidString(b.PolicyVersion):
		return &ValidationError{Field: "policy_version", Reason: "must be a nonempty UTF-8 string"}
	case b.CreatedAt.IsZero():
		return &ValidationError{Field: "created_at", Reason: "is required"}
	case b.CreatedAt.Location() != time.UTC || b.CreatedAt.Nanosecond()%1000 != 0:
		return &ValidationError{Field: "created_at", Reason: "must be UTC with at most microsecond precision"}
	}
	return nil
}
