package permission

import (
	"errors"
	"strings"
	"sync"

	"github.com/govhost/govhost/abi"
)

// LionAGI's PermissionPolicy (ADR-0086 D1), decision for decision.

type lionMode uint8

const (
	modeRules lionMode = iota
	modeAllowAll
	modeDenyAll
)

type lionPolicy struct {
	mode lionMode
	// byTool holds each canonical tool's deny, allow and escalate rules
	// (tierDeny, tierAllow, tierEscalate), "*" included; star is byTool["*"].
	//
	// NB: one map, looked up once a call: in a Go-built guest a string-keyed
	// map lookup costs a thousand-odd instructions, and the tiers used to be
	// three maps looked up twice each.
	byTool map[string]*toolTiers
	star   *toolTiers
}

// toolTiers are one tool's rule lists, by tier.
type toolTiers [3][]fnmatchRule

const (
	tierDeny = iota
	tierAllow
	tierEscalate
)

// tierDetail is the Detail prefix of a verdict by a rule of each tier.
var tierDetail = [3]string{"denied by rule: ", "allowed by rule: ", "escalate by rule: "}

// toolAliases are LionAGI's _TOOL_ALIASES; no other suffix is stripped.
var toolAliases = map[string]string{
	"bash_tool":    "bash",
	"reader_tool":  "reader",
	"editor_tool":  "editor",
	"search_tool":  "search",
	"context_tool": "context",
}

// canonicalTool is LionAGI's _canonical_tool_name: lower-case, then alias.
func canonicalTool(name string) string {
	lowered := pyLower(name)
	if !strings.HasSuffix(lowered, "_tool") { // every alias ends so: no lookup
		return lowered
	}
	if alias, ok := toolAliases[lowered]; ok {
		return alias
	}
	return lowered
}

func presetPolicy(field, name string) (*lionPolicy, error) {
	all := []string{"*"}
	switch pyLower(name) {
	case "allow_all":
		return &lionPolicy{mode: modeAllowAll}, nil
	case "deny_all":
		return &lionPolicy{mode: modeDenyAll}, nil
	case "read_only":
		return newLionPolicy(&LionAGIConfig{
			Mode:  strPtr("rules"),
			Allow: []ToolRules{{"reader", all}, {"search", all}, {"context", all}},
			Deny:  []ToolRules{{"editor", all}, {"bash", all}},
		}), nil
	case "safe":
		return newLionPolicy(&LionAGIConfig{
			Mode:     strPtr("rules"),
			Allow:    []ToolRules{{"reader", all}, {"editor", all}, {"search", all}, {"context", all}},
			Deny:     []ToolRules{{"bash", []string{"rm *", "sudo *", "chmod *", "kill *", "mkfs *"}}},
			Escalate: []ToolRules{{"bash", all}},
		}), nil
	}
	return nil, unknownPreset(field, name)
}

func strPtr(s string) *string { return &s }

// newLionPolicy is PermissionPolicy.from_dict followed by __post_init__.
func newLionPolicy(c *LionAGIConfig) *lionPolicy {
	p := &lionPolicy{mode: modeAllowAll} // from_dict: a missing mode is allow_all
	if c.Mode != nil {
		switch *c.Mode {
		case "allow_all":
			p.mode = modeAllowAll
		case "deny_all":
			p.mode = modeDenyAll
		default:
			p.mode = modeRules
		}
	}
	p.byTool = map[string]*toolTiers{}
	for tier, rules := range [3][]ToolRules{c.Deny, c.Allow, c.Escalate} {
		for tool, list := range normalizeRules(rules, tier) {
			t := p.byTool[tool]
			if t == nil {
				t = new(toolTiers)
				p.byTool[tool] = t
			}
			t[tier] = list
		}
	}
	p.star = p.byTool["*"]
	return p
}

// normalizeRules is _normalize_rules: keys canonicalised; when two keys
// canonicalise alike the later list replaces the earlier one.
// The rules are compiled for tier (their verdict's Detail is made here).
func normalizeRules(rules []ToolRules, tier int) map[string][]fnmatchRule {
	out := make(map[string][]fnmatchRule, len(rules))
	for _, tr := range rules {
		compiled := make([]fnmatchRule, len(tr.Patterns))
		for i, p := range tr.Patterns {
			compiled[i] = newRule(p)
			compiled[i].detail = tierDetail[tier] + p
		}
		out[canonicalTool(tr.Tool)] = compiled
	}
	return out
}

// matchText is the string a rule is matched against, or (for the editor and
// reader tools) a non-string argument that Python would hand to fnmatch,
// which raises on it unless the pattern is "*".
type matchText struct {
	text    string
	badType string // Python type name of a non-string argument; "" if text is valid
}

func (p *lionPolicy) evaluate(in *abi.GateInput) abi.GateOutput {
	if p.mode == modeAllowAll {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: CodeModeAllowAll, Detail: "mode=allow_all"}
	}
	scratch := argumentScratch.Get().(*[]member)
	args, err := decodeArguments(in.Arguments, *scratch)
	out := p.decide(in, args, err)
	if err == nil && args.obj != nil {
		// NB: every string of out is built by concatenation or comes
		// from the configuration (see parseJSONBorrowed), never from args.
		clear(args.obj)
		*scratch = args.obj[:0]
	}
	argumentScratch.Put(scratch)
	return out
}

// argumentScratch holds the backing arrays of decoded arguments' top-level
// members, reused from call to call: in a Go-built guest an allocation costs
// about a microsecond.
var argumentScratch = sync.Pool{New: func() any { return new([]member) }}

// decide is evaluate on the decoded arguments (err: they did not decode).
func (p *lionPolicy) decide(in *abi.GateInput, args value, err error) abi.GateOutput {
	if p.mode == modeDenyAll {
		// deny_all reads no arguments; they only name the message's subject.
		base := alRequest{tool: in.Tool}
		if err == nil {
			base = requestBase(in, &args)
		}
		return lionDeny(&base, CodeModeDenyAll, "mode=deny_all", "")
	}
	if err != nil {
		return invalidArguments(in, err)
	}
	tool := canonicalTool(in.Tool)
	mt, out, failed := buildMatchString(in, tool, &args)
	if failed {
		return out
	}

	var lowered string
	haveLower := false
	var none toolTiers
	own, star := p.byTool[tool], p.star
	if own == nil {
		own = &none
	}
	if star == nil {
		star = &none
	}
	for tier := range own {
		for _, list := range [2][]fnmatchRule{own[tier], star[tier]} {
			for i := range list {
				r := &list[i]
				if mt.badType != "" && !r.any {
					return lionDenyArgs(in, &args, CodeEvaluatorError,
						"evaluator error: expected str, bytes or os.PathLike object, not "+mt.badType, "")
				}
				if !r.matches(mt.text, &lowered, &haveLower) {
					continue
				}
				switch tier {
				case tierDeny:
					return lionDenyArgs(in, &args, CodeDeniedByRule, r.detail, r.pattern)
				case tierAllow:
					return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: CodeAllowedByRule,
						Detail: r.detail, MatchedRule: r.pattern}
				default:
					base := requestBase(in, &args)
					// The approval text names the operation when there is
					// one: the caller's, else execute_command for bash.
					if op, ok := parseOperation(in.Operation); ok {
						base.op, base.hasOp = op, true
					} else if tool == "bash" {
						base.op, base.hasOp = opExecuteCommand, true
					}
					return abi.GateOutput{
						Decision:    abi.DecisionRequireApproval,
						ReasonCode:  CodeEscalate,
						Detail:      r.detail,
						MatchedRule: r.pattern,
						Message:     formatApproval(&base),
						DenyMessage: formatDenied(&base),
					}
				}
			}
		}
	}
	return lionDenyArgs(in, &args, CodeDefaultDeny, "no matching rule, default deny", "")
}

// lionDenyArgs is lionDeny with the subject taken from the request.
func lionDenyArgs(in *abi.GateInput, args *value, code, reason, rule string) abi.GateOutput {
	base := requestBase(in, args)
	return lionDeny(&base, code, reason, rule)
}

// lionDeny is a deny with LionAGI's reason as Detail and AgentLane's
// model-facing text as Message.
func lionDeny(base *alRequest, code, reason, rule string) abi.GateOutput {
	return abi.GateOutput{
		Decision:    abi.DecisionDeny,
		ReasonCode:  code,
		Detail:      reason,
		MatchedRule: rule,
		Message:     formatDenied(base),
	}
}

// buildMatchString is _build_match_string. failed is set when the decision
// is made here: a shell control token, or argument types Python raises on.
func buildMatchString(in *abi.GateInput, tool string, args *value) (mt matchText, out abi.GateOutput, failed bool) {
	switch tool {
	case "bash":
		command := ""
		if v, ok := args.get("command"); ok {
			command = pyStr(v)
		}
		if hasShellControl(command) {
			return mt, lionDenyArgs(in, args, CodeShellControl,
				"Shell control operator requires explicit approval: "+pyQuote(command), ""), true
		}
		return matchText{text: command}, out, false
	case "editor":
		return argText(args, "file_path"), out, false
	case "reader":
		return argText(args, "path"), out, false
	case "search":
		pattern := ""
		if v, ok := args.get("pattern"); ok {
			if v.kind != kindString {
				return mt, lionDenyArgs(in, args, CodeEvaluatorError, "evaluator error: "+concatError(v), ""), true
			}
			pattern = v.s
		}
		path := ""
		if v, ok := args.get("path"); ok && pyTruthy(v) {
			if v.kind != kindString {
				return mt, lionDenyArgs(in, args, CodeEvaluatorError,
					`evaluator error: can only concatenate str (not "`+pyTypeName(v)+`") to str`, ""), true
			}
			path = v.s
		}
		return matchText{text: pattern + " " + path}, out, false
	}
	// Any other tool: action, then every argument value, space-separated.
	var b strings.Builder
	b.Grow(len(in.Action) + len(in.Arguments))
	b.WriteString(in.Action)
	b.WriteByte(' ')
	first := true
	forEachArgument(in.ArgumentOrder, args, func(v *value) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(pyStr(v))
	})
	return matchText{text: b.String()}, out, false
}

// argText is args.get(name, ""): a string is matched as it is; any other
// value makes fnmatch raise (see matchText).
func argText(args *value, name string) matchText {
	v, ok := args.get(name)
	if !ok {
		return matchText{}
	}
	if v.kind != kindString {
		return matchText{badType: pyTypeName(v)}
	}
	return matchText{text: v.s}
}

// forEachArgument visits the top-level argument values in the caller's
// order: first the names in order that the arguments hold (each once), then
// any remaining members in the order of the arguments object.
func forEachArgument(order []string, args *value, fn func(*value)) {
	if len(order) == 0 {
		for i := range args.obj {
			fn(&args.obj[i].val)
		}
		return
	}
	var seen []bool
	if len(args.obj) > 0 {
		seen = make([]bool, len(args.obj))
	}
	for _, name := range order {
		for i := range args.obj {
			if args.obj[i].key == name && !seen[i] {
				seen[i] = true
				fn(&args.obj[i].val)
				break
			}
		}
	}
	for i := range args.obj {
		if !seen[i] {
			fn(&args.obj[i].val)
		}
	}
}

// hasShellControl is LionAGI's _SHELL_CONTROL regex
// (;|&&|\|\||\||`|\$\(|[<>]|\n), searched anywhere (quotes are not parsed).
// A lone '&', "$VAR", "${…}", '!', tab and '\r' are not tokens.
func hasShellControl(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ';', '|', '`', '<', '>', '\n':
			return true
		case '&':
			if i+1 < len(s) && s[i+1] == '&' {
				return true
			}
		case '$':
			if i+1 < len(s) && s[i+1] == '(' {
				return true
			}
		}
	}
	return false
}

// pyTruthy is Python's bool() of a json.loads value.
func pyTruthy(v *value) bool {
	switch v.kind {
	case kindNull:
		return false
	case kindBool:
		return v.b
	case kindNumber:
		n := pyNumber(v.s)
		return n != "0" && n != "0.0" && n != "-0.0"
	case kindString:
		return v.s != ""
	case kindArray:
		return len(v.arr) > 0
	}
	return len(v.obj) > 0
}

// pyTypeName is type(v).__name__ for a json.loads value.
func pyTypeName(v *value) string {
	switch v.kind {
	case kindNull:
		return "NoneType"
	case kindBool:
		return "bool"
	case kindNumber:
		if strings.ContainsAny(v.s, ".eE") {
			return "float"
		}
		return "int"
	case kindString:
		return "str"
	case kindArray:
		return "list"
	}
	return "dict"
}

// concatError is the TypeError Python raises for value + " " when value is
// not a str.
func concatError(v *value) string {
	if v.kind == kindArray {
		return `can only concatenate list (not "str") to list`
	}
	return "unsupported operand type(s) for +: '" + pyTypeName(v) + "' and 'str'"
}

// decodeArguments decodes the request's arguments; absent or null is {}.
// scratch is as for parseJSONBorrowed.
func decodeArguments(raw []byte, scratch []member) (value, error) {
	if len(raw) == 0 {
		return value{kind: kindObject}, nil
	}
	v, err := parseJSONBorrowed(raw, scratch)
	if err != nil {
		return value{}, err
	}
	switch v.kind {
	case kindObject:
		return v, nil
	case kindNull:
		return value{kind: kindObject}, nil
	}
	return value{}, errNotObject
}

var errNotObject = errors.New("not a JSON object")
