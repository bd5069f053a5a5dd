package destructive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/govhost/govhost/abi"
)

// Reason codes. A deny names the family of the destructive pattern.
const (
	ReasonAllowed          = "destructive.none"
	ReasonNoCommand        = "destructive.no_command"
	ReasonInvalidCommand   = "destructive.invalid_command"
	ReasonRmRecursiveForce = "destructive.rm_recursive_force"
	ReasonGitPushForce     = "destructive.git_push_force"
	ReasonGitResetHard     = "destructive.git_reset_hard"
	ReasonGitCleanForce    = "destructive.git_clean_force"
	ReasonSQLDrop          = "destructive.sql_drop"
	ReasonSQLTruncate      = "destructive.sql_truncate"
	ReasonMkfs             = "destructive.mkfs"
	ReasonDD               = "destructive.dd"
	ReasonBlockDeviceWrite = "destructive.block_device_write"
)

// detailSuffix is the second line of LionAGI's PermissionError text.
const detailSuffix = "\nIf you need this, explain why and ask the user to run it manually."

// ErrConfig is matched (errors.Is) by every configuration error.
var ErrConfig = errors.New("destructive: invalid config")

// ConfigError names the configuration field that was refused.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("destructive: config: %v", e.Err)
	}
	return fmt.Sprintf("destructive: config: field %q: %v", e.Field, e.Err)
}

func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// Gate is a configured guard_destructive. The zero value is not usable; call
// New. A Gate is immutable and safe for concurrent use.
type Gate struct {
	_ struct{}
}

// New returns the gate for configJSON, which may be empty, "null" or "{}".
// The gate has no options: any field is refused with a *ConfigError naming
// it, so a typo never silently weakens a policy.
func New(configJSON []byte) (*Gate, error) {
	trimmed := bytes.TrimSpace(configJSON)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return &Gate{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("not a JSON object: %w", err)}
	}
	for k := range fields {
		return nil, &ConfigError{Field: k, Err: errors.New("unknown field (guard_destructive takes no options)")}
	}
	return &Gate{}, nil
}

// Evaluate inspects only the "command" argument of in.Arguments:
//
//   - absent: allow (destructive.no_command), as LionAGI's args.get("command", "");
//   - a string: deny with the family's reason code when it is destructive,
//     else allow (destructive.none);
//   - anything else (null, a number, malformed arguments): deny
//     (destructive.invalid_command) — the original raises, which refuses.
//
// A deny carries LionAGI's text in Detail ("Blocked destructive command:
// <cmd>" and its second line), AgentLane's model-facing text in Message, and
// in MatchedRule the LionAGI regular expression when one of them matched.
func (g *Gate) Evaluate(in abi.GateInput) abi.GateOutput {
	val, found, ok := lookupKey(in.Arguments, "command")
	if !ok {
		return g.invalid(in, "arguments are not a JSON object")
	}
	if !found {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: ReasonNoCommand}
	}
	if len(val) < 2 || val[0] != '"' {
		return g.invalid(in, "command is not a string")
	}
	// NB: the command is folded straight from its JSON literal; the string
	// itself is decoded only for a denial's Detail.
	var buf [192]byte
	fam, rule := classifyFolded(foldJSON(val, buf[:0]))
	if fam == famNone {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: ReasonAllowed}
	}
	cmd, _ := decodeString(val)
	return abi.GateOutput{
		Decision:    abi.DecisionDeny,
		ReasonCode:  familyCodes[fam],
		Detail:      "Blocked destructive command: " + cmd + detailSuffix,
		Message:     deniedMessage(in.Tool),
		MatchedRule: rule,
	}
}

func (g *Gate) invalid(in abi.GateInput, why string) abi.GateOutput {
	return abi.GateOutput{
		Decision:   abi.DecisionDeny,
		ReasonCode: ReasonInvalidCommand,
		Detail:     "guard_destructive could not evaluate: " + why,
		Message:    deniedMessage(in.Tool),
	}
}

// deniedMessage is AgentLane's format_tool_permission_result for a deny with
// no reason and a command subject.
func deniedMessage(tool string) string {
	if tool == "" {
		tool = "bash"
	}
	return "permission denied: " + tool + " is not allowed for this command"
}

// Classify reports the reason code of cmd's destructive family
// (ReasonAllowed when it has none) and, when LionAGI's regex list matched,
// the expression that did. Evaluate classifies the "command" argument the
// same way (folding it straight from its JSON literal).
func Classify(cmd string) (reasonCode, lionRule string) {
	fam, rule := classify(cmd)
	return familyCodes[fam], rule
}

func classify(cmd string) (family int, lionRule string) {
	var buf [192]byte
	return classifyFolded(fold(cmd, buf[:0]))
}

func classifyFolded(b []byte) (family int, lionRule string) {
	rules, ext := baseline(b)
	ext |= extended(b) // NB: rewrites b
	var base uint16
	for k, f := range ruleFamily {
		if rules&(1<<k) != 0 {
			base |= 1 << f
		}
	}
	for f := famFirst; f <= famLast; f++ {
		bit := uint16(1) << f
		if base&bit != 0 {
			for k, rf := range ruleFamily {
				if rf == f && rules&(1<<k) != 0 {
					return f, LionRules[k]
				}
			}
		}
		if ext&bit != 0 {
			return f, ""
		}
	}
	return famNone, ""
}
