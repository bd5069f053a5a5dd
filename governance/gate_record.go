package governance

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// GatePhase says which pass of the gate sequence evaluated a binding:
// check (every applicable binding, in snapshot order) or recheck (every
// check binding again on the final arguments, after a transform gate or an
// approver replaced them — ADR-0086 D2's security → user → security).
type GatePhase string

const (
	PhaseCheck   GatePhase = "check"
	PhaseRecheck GatePhase = "recheck"
)

// Valid reports whether p is check or recheck.
func (p GatePhase) Valid() bool { return p == PhaseCheck || p == PhaseRecheck }

// Approval outcomes a GATE_EVALUATED records when the gate answered
// require_approval.
const (
	ApprovalApproved        = "approved"
	ApprovalApprovedEarlier = "approved_earlier"
	ApprovalRejected        = "rejected"
	ApprovalUnavailable     = "unavailable"
	ApprovalFailed          = "failed"
	ApprovalBadArguments    = "bad_arguments"
)

var approvalOutcomes = []string{ApprovalApproved, ApprovalApprovedEarlier, ApprovalRejected, ApprovalUnavailable, ApprovalFailed, ApprovalBadArguments}

// GateApproval is what a GATE_EVALUATED records about an approval: the
// gate answered require_approval (GateReasonCode) and the approval broker
// settled it (Outcome; DecidedAt and Approver when someone decided).
type GateApproval struct {
	GateReasonCode string
	Outcome        string
	// DecidedAt is zero when nobody decided (unavailable, approved_earlier).
	DecidedAt time.Time
	Approver  *ActorRef
}

// GateEvaluatedPayload is the payload of a GATE_EVALUATED record: the one type
// the controller writes and certify reads. Its JSON members (payload_json,
// canonical) are:
//
//	gate_id                 string, the binding's gate id
//	level                   "hard" | "soft" | "advisory", the binding's level
//	decision                "allow" | "deny"
//	reason_code             string
//	phase                   "check" | "recheck"
//	argument_digest         64 hex, the arguments the gate saw
//	module_digest           64 hex, the binding's module
//	duration_us             integer >= 0
//	output_argument_digest  64 hex, optional: a transform's (or approver's) new arguments
//	exception_grant_id      UUID, optional: the grant that excused this deny
//	break_glass             true, optional: the grant is a break-glass grant
//	exception_ambiguous     true, optional: several grants matched, none used
//	gate_decision           "require_approval", optional (with approval)
//	gate_reason_code        string, with gate_decision
//	approval                approved | approved_earlier | rejected | unavailable | failed | bad_arguments
//	approval_decided_at     time (D2 form), optional
//	approver_kind, approver_id  strings, optional, both or neither
//
// No other member is allowed.
type GateEvaluatedPayload struct {
	GateID               string
	Level                GateLevel
	Decision             GateDecision
	ReasonCode           string
	Phase                GatePhase
	ArgumentDigest       string
	ModuleDigest         string
	DurationMicros       int64
	OutputArgumentDigest string
	ExceptionGrantID     uuid.NullUUID
	BreakGlass           bool
	ExceptionAmbiguous   bool
	Approval             *GateApproval
}

var gateEvaluatedKeys = []string{
	"gate_id", "level", "decision", "reason_code", "phase", "argument_digest", "module_digest", "duration_us",
	"output_argument_digest", "exception_grant_id", "break_glass", "exception_ambiguous",
	"gate_decision", "gate_reason_code", "approval", "approval_decided_at", "approver_kind", "approver_id",
}

// Fields returns the payload to append (canonically encoded by NextRecord).
func (g GateEvaluatedPayload) Fields() *Fields {
	f := NewFields(10).String("gate_id", g.GateID).String("level", string(g.Level)).
		String("decision", string(g.Decision)).String("reason_code", g.ReasonCode).
		String("phase", string(g.Phase)).String("argument_digest", g.ArgumentDigest).
		String("module_digest", g.ModuleDigest).Int("duration_us", g.DurationMicros)
	if g.OutputArgumentDigest != "" {
		f.String("output_argument_digest", g.OutputArgumentDigest)
	}
	if g.ExceptionGrantID.Valid {
		f.UUID("exception_grant_id", g.ExceptionGrantID.UUID)
	}
	if g.BreakGlass {
		f.Bool("break_glass", true)
	}
	if g.ExceptionAmbiguous {
		f.Bool("exception_ambiguous", true)
	}
	if a := g.Approval; a != nil {
		f.String("gate_decision", "require_approval").String("gate_reason_code", a.GateReasonCode).String("approval", a.Outcome)
		if !a.DecidedAt.IsZero() {
			f.Value("approval_decided_at", a.DecidedAt)
		}
		if a.Approver != nil {
			f.String("approver_kind", a.Approver.Kind).String("approver_id", a.Approver.ID)
		}
	}
	return f
}

// ParseGateEvaluated reads a GATE_EVALUATED payload (as ParseJSON returns
// it) strictly: every required member with its type, no unknown member,
// optional members only in their combinations. Errors are
// *ValidationError naming the member.
func ParseGateEvaluated(m map[string]any) (GateEvaluatedPayload, error) {
	fail := func(field, reason string) (GateEvaluatedPayload, error) {
		return GateEvaluatedPayload{}, &ValidationError{Field: field, Reason: reason}
	}
	for k := range m {
		if !slices.Contains(gateEvaluatedKeys, k) {
			return fail(k, "unknown member of a GATE_EVALUATED payload")
		}
	}
	str := func(k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	var g GateEvaluatedPayload
	var ok bool
	if g.GateID, ok = str("gate_id"); !ok || g.GateID == "" {
		return fail("gate_id", "must be a nonempty string")
	}
	level, _ := str("level")
	if g.Level = GateLevel(level); !g.Level.Valid() {
		return fail("level", "must be hard, soft or advisory")
	}
	decision, _ := str("decision")
	if g.Decision = GateDecision(decision); !g.Decision.Valid() {
		return fail("decision", "must be allow or deny")
	}
	if g.ReasonCode, ok = str("reason_code"); !ok {
		return fail("reason_code", "must be a string")
	}
	phase, _ := str("phase")
	if g.Phase = GatePhase(phase); !g.Phase.Valid() {
		return fail("phase", "must be check or recheck")
	}
	if g.ArgumentDigest, _ = str("argument_digest"); !IsDigest(g.ArgumentDigest) {
		return fail("argument_digest", "must be 64 lowercase hex")
	}
	if g.ModuleDigest, _ = str("module_digest"); !IsDigest(g.ModuleDigest) {
		return fail("module_digest", "must be 64 lowercase hex")
	}
	n, isNum := m["duration_us"].(json.Number)
	if !isNum || !isCanonicalCount(string(n)) {
		return fail("duration_us", "must be a nonnegative integer")
	}
	var err error
	if g.DurationMicros, err = n.Int64(); err != nil {
		return fail("duration_us", "integer out of range")
	}
	if _, has := m["output_argument_digest"]; has {
		if g.OutputArgumentDigest, _ = str("output_argument_digest"); !IsDigest(g.OutputArgumentDigest) {
			return fail("output_argument_digest", "must be 64 lowercase hex")
		}
	}
	if _, has := m["exception_grant_id"]; has {
		s, _ := str("exception_grant_id")
		id, err := ParseCanonicalUUID("exception_grant_id", s)
		if err != nil {
			return GateEvaluatedPayload{}, err
		}
		g.ExceptionGrantID = uuid.NullUUID{UUID: id, Valid: true}
	}
	for _, flag := range []struct {
		key string
		to  *bool
	}{{"break_glass", &g.BreakGlass}, {"exception_ambiguous", &g.ExceptionAmbiguous}} {
		if v, has := m[flag.key]; has {
			if v != true {
				return fail(flag.key, "must be true when present")
			}
			*flag.to = true
		}
	}
	if g.BreakGlass && !g.ExceptionGrantID.Valid {
		return fail("break_glass", "only with exception_grant_id")
	}
	if g.ExceptionAmbiguous && g.ExceptionGrantID.Valid {
		return fail("exception_ambiguous", "not with exception_grant_id")
	}
	if (g.ExceptionGrantID.Valid || g.ExceptionAmbiguous) && (g.Decision != Deny || g.Level == LevelAdvisory) {
		return fail("exception_grant_id", "an exception is recorded only on a hard or soft deny")
	}
	approval, err := parseGateApproval(m)
	if err != nil {
		return GateEvaluatedPayload{}, err
	}
	g.Approval = approval
	return g, nil
}

func parseGateApproval(m map[string]any) (*GateApproval, error) {
	fail := func(field, reason string) (*GateApproval, error) {
		return nil, &ValidationError{Field: field, Reason: reason}
	}
	_, hasDecision := m["gate_decision"]
	if !hasDecision {
		for _, k := range []string{"gate_reason_code", "approval", "approval_decided_at", "approver_kind", "approver_id"} {
			if _, has := m[k]; has {
				return fail(k, "only with gate_decision require_approval")
			}
		}
		return nil, nil
	}
	if m["gate_decision"] != "require_approval" {
		return fail("gate_decision", "must be require_approval")
	}
	var a GateApproval
	var ok bool
	if a.GateReasonCode, ok = m["gate_reason_code"].(string); !ok {
		return fail("gate_reason_code", "must be a string")
	}
	if a.Outcome, ok = m["approval"].(string); !ok || !slices.Contains(approvalOutcomes, a.Outcome) {
		return fail("approval", fmt.Sprintf("must be one of %v", approvalOutcomes))
	}
	if v, has := m["approval_decided_at"]; has {
		s, _ := v.(string)
		t, err := ParseTime("approval_decided_at", s)
		if err != nil {
			return nil, err
		}
		a.DecidedAt = t
	}
	kind, hasKind := m["approver_kind"]
	id, hasID := m["approver_id"]
	if hasKind != hasID {
		return fail("approver_kind", "approver_kind and approver_id come together")
	}
	if hasKind {
		k, ok1 := kind.(string)
		i, ok2 := id.(string)
		r := ActorRef{Kind: k, ID: i}
		if !ok1 || !ok2 || r.Validate() != nil {
			return fail("approver_kind", "must name a valid actor")
		}
		a.Approver = &r
	}
	return &a, nil
}
