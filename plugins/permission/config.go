package permission

import (
	"strconv"
	"strings"
)

// Config is a permission gate's configuration: exactly one family is set.
//
// The JSON form (README.md has examples):
//
//	{"preset": "safe"}                              LionAGI preset
//	{"lionagi": "read_only"}                        the same, spelled out
//	{"lionagi": {"mode": …, "allow": {…}, …}}       LionAGI PermissionPolicy.from_dict
//	{"agentlane": {"grants": "read,bash", …}}       AgentLane grant / approval policies
type Config struct {
	// Preset is a LionAGI preset name ("preset", or "lionagi" as a string):
	// allow_all, deny_all, read_only or safe, in any letter case.
	Preset string
	// LionAGI is a PermissionPolicy.from_dict mapping.
	LionAGI *LionAGIConfig
	// AgentLane configures AgentLane's grant and side-effect approval policies.
	AgentLane *AgentLaneConfig
	// Coding configures govhost's coding-agent decisions (coding.go).
	Coding *CodingConfig
}

// LionAGIConfig is the shape PermissionPolicy.from_dict reads.
type LionAGIConfig struct {
	// Mode is the policy mode; nil means the field was absent, which
	// from_dict reads as "allow_all". Only the exact strings "allow_all" and
	// "deny_all" are modes of their own; every other string is rules mode.
	Mode *string
	// Allow, Deny and Escalate map tool names to fnmatch patterns, in the
	// order the keys were written. Keys are canonicalised (lower-cased, then
	// the five "*_tool" aliases) when the gate is built; when two keys
	// canonicalise alike, the later one's list replaces the earlier one's.
	Allow, Deny, Escalate []ToolRules
}

// ToolRules is one entry of a LionAGI rule map.
type ToolRules struct {
	Tool     string
	Patterns []string
}

// Whole-tool grant semantics (AgentLaneConfig.WholeToolGrants).
const (
	// WholeToolDeclared expands a whole-tool grant ("write") into one grant
	// per operation the tool declares, as AgentLane's guide specifies: it is
	// not a wildcard for undeclared operations. The default.
	WholeToolDeclared = "declared"
	// WholeToolAnyOperation makes a whole-tool grant match every operation
	// of the tool, as earlier AgentLane releases did.
	WholeToolAnyOperation = "any_operation"
)

// AgentLaneConfig composes, in this order (strictest wins), an optional
// ToolPermissionGrantPolicy and an optional
// SideEffectApprovalToolPermissionPolicy. With neither, every request is
// allowed (an empty AllOf).
type AgentLaneConfig struct {
	// KnownTools declares app tools for the grant grammar: tool name →
	// operations it exposes. Names are used exactly as written (not
	// lower-cased); a name that collides with a built-in tool is ignored.
	KnownTools []KnownTool
	// Grants is the grant string (parse_tool_permission_grants grammar).
	// nil: no grant layer. A blank string: a grant layer that denies
	// everything.
	Grants *string
	// WholeToolGrants is WholeToolDeclared (default when empty) or
	// WholeToolAnyOperation.
	WholeToolGrants string
	// SideEffectApproval, when set, adds the approval layer.
	SideEffectApproval *SideEffectApprovalConfig
}

// KnownTool is one entry of known_tools.
type KnownTool struct {
	Tool       string
	Operations []string
}

// SideEffectApprovalConfig configures SideEffectApprovalToolPermissionPolicy.
type SideEffectApprovalConfig struct {
	// Operations are the covered operations; nil means AgentLane's
	// side-effect set (create_file, overwrite_file, modify_file,
	// create_directory, execute_command, network_access). An empty,
	// non-nil list covers nothing.
	Operations []string
	// Grants, when set, is a grant string whose matches downgrade approval to
	// allow.
	Grants *string
	// GrantsDowngrade uses AgentLaneConfig.Grants as the downgrade grants
	// (workspace_tool_policy's grants_downgrade_side_effect_approval). It
	// excludes Grants.
	GrantsDowngrade bool
}

// ParseConfig decodes a configuration. It checks the JSON shape and types;
// New and NewFromConfig also check the values (preset names, grants,
// operations).
func ParseConfig(data []byte) (*Config, error) {
	doc, err := parseJSON(data)
	if err != nil {
		return nil, &ConfigError{Kind: ErrSyntax, Detail: err.Error()}
	}
	if doc.kind != kindObject {
		return nil, wrongType("", "an object", &doc)
	}
	c := &Config{}
	families := 0
	for i := range doc.obj {
		m := &doc.obj[i]
		switch m.key {
		case "preset":
			if m.val.kind != kindString {
				return nil, wrongType("preset", "a string", &m.val)
			}
			if _, err := presetPolicy("preset", m.val.s); err != nil {
				return nil, err
			}
			c.Preset = m.val.s
			families++
		case "lionagi":
			switch m.val.kind {
			case kindString:
				if _, err := presetPolicy("lionagi", m.val.s); err != nil {
					return nil, err
				}
				c.Preset = m.val.s
			case kindObject:
				lc, err := parseLionAGI("lionagi", &m.val)
				if err != nil {
					return nil, err
				}
				c.LionAGI = lc
			default:
				return nil, wrongType("lionagi", "an object or a preset name", &m.val)
			}
			families++
		case "agentlane":
			if m.val.kind != kindObject {
				return nil, wrongType("agentlane", "an object", &m.val)
			}
			ac, err := parseAgentLane("agentlane", &m.val)
			if err != nil {
				return nil, err
			}
			c.AgentLane = ac
			families++
		case "coding":
			if m.val.kind != kindObject {
				return nil, wrongType("coding", "an object", &m.val)
			}
			cc, err := parseCoding("coding", &m.val)
			if err != nil {
				return nil, err
			}
			c.Coding = cc
			families++
		default:
			return nil, configErr(fieldPath("", m.key), ErrUnknownField,
				`unknown field (want exactly one of "preset", "lionagi", "agentlane", "coding")`)
		}
	}
	if families != 1 {
		return nil, configErr("", ErrFamily,
			`want exactly one of "preset", "lionagi", "agentlane", "coding"; got %d`, families)
	}
	return c, nil
}

func parseLionAGI(field string, v *value) (*LionAGIConfig, error) {
	lc := &LionAGIConfig{}
	for i := range v.obj {
		m := &v.obj[i]
		f := fieldPath(field, m.key)
		switch m.key {
		case "mode":
			if m.val.kind != kindString {
				return nil, wrongType(f, "a string", &m.val)
			}
			mode := m.val.s
			lc.Mode = &mode
		case "allow", "deny", "escalate":
			rules, err := parseRuleMap(f, &m.val)
			if err != nil {
				return nil, err
			}
			switch m.key {
			case "allow":
				lc.Allow = rules
			case "deny":
				lc.Deny = rules
			default:
				lc.Escalate = rules
			}
		case "on_escalate":
			return nil, configErr(f, ErrUnknownField,
				"not configurable: an escalation is answered require_approval and decided by the host's approval broker")
		default:
			return nil, configErr(f, ErrUnknownField, `unknown field (want "mode", "allow", "deny", "escalate")`)
		}
	}
	return lc, nil
}

// parseRuleMap reads one LionAGI rule map in either form:
//
//	{"bash": ["git *"], "bash_tool": ["ls"]}              the from_dict map
//	[{"tool": "bash", "patterns": ["git *"]}, …]          the same, as a list
//
// The list form carries the author's order through canonical JSON, which
// sorts object keys (the policy loader writes it); the order matters where
// two keys canonicalise alike, because the later one's list replaces the
// earlier one's. In the map form a literal repeated key keeps its first
// position and its last list, as a Python dict built by json.loads does
// (parseJSON keeps objects that way).
func parseRuleMap(field string, v *value) ([]ToolRules, error) {
	switch v.kind {
	case kindObject:
	case kindArray:
		return parseRuleList(field, v)
	default:
		return nil, wrongType(field, "an object of tool name → list of patterns (or a list of {tool, patterns})", v)
	}
	rules := make([]ToolRules, 0, len(v.obj))
	for i := range v.obj {
		m := &v.obj[i]
		pats, err := parsePatterns(fieldPath(field, m.key), &m.val)
		if err != nil {
			return nil, err
		}
		rules = append(rules, ToolRules{Tool: m.key, Patterns: pats})
	}
	return rules, nil
}

// parseRuleList reads the list form of a rule map, in order.
func parseRuleList(field string, v *value) ([]ToolRules, error) {
	rules := make([]ToolRules, 0, len(v.arr))
	for i := range v.arr {
		el := &v.arr[i]
		f := field + "[" + strconv.Itoa(i) + "]"
		if el.kind != kindObject {
			return nil, wrongType(f, `an object {"tool": …, "patterns": […]}`, el)
		}
		var (
			tr                ToolRules
			haveTool, havePat bool
		)
		for j := range el.obj {
			m := &el.obj[j]
			switch m.key {
			case "tool":
				if m.val.kind != kindString {
					return nil, wrongType(f+".tool", "a string", &m.val)
				}
				tr.Tool, haveTool = m.val.s, true
			case "patterns":
				pats, err := parsePatterns(f+".patterns", &m.val)
				if err != nil {
					return nil, err
				}
				tr.Patterns, havePat = pats, true
			default:
				return nil, configErr(fieldPath(f, m.key), ErrUnknownField, `unknown field (want "tool", "patterns")`)
			}
		}
		if !haveTool || !havePat {
			return nil, configErr(f, ErrBadValue, `needs both "tool" and "patterns"`)
		}
		rules = append(rules, tr)
	}
	return rules, nil
}

func parsePatterns(field string, v *value) ([]string, error) {
	if v.kind != kindArray {
		return nil, wrongType(field, "a list of pattern strings", v)
	}
	pats := make([]string, 0, len(v.arr))
	for j := range v.arr {
		el := &v.arr[j]
		if el.kind != kindString {
			return nil, wrongType(field+"["+strconv.Itoa(j)+"]", "a string", el)
		}
		pats = append(pats, el.s)
	}
	return pats, nil
}

func parseAgentLane(field string, v *value) (*AgentLaneConfig, error) {
	ac := &AgentLaneConfig{}
	for i := range v.obj {
		m := &v.obj[i]
		f := fieldPath(field, m.key)
		switch m.key {
		case "known_tools":
			if m.val.kind == kindNull {
				continue
			}
			if m.val.kind != kindObject {
				return nil, wrongType(f, "an object of tool name → list of operations", &m.val)
			}
			for j := range m.val.obj {
				t := &m.val.obj[j]
				ops, err := parseStringList(fieldPath(f, t.key), &t.val)
				if err != nil {
					return nil, err
				}
				ac.KnownTools = append(ac.KnownTools, KnownTool{Tool: t.key, Operations: ops})
			}
		case "grants":
			g, err := parseOptionalString(f, &m.val)
			if err != nil {
				return nil, err
			}
			ac.Grants = g
		case "whole_tool_grants":
			if m.val.kind != kindString {
				return nil, wrongType(f, "a string", &m.val)
			}
			ac.WholeToolGrants = m.val.s
		case "side_effect_approval":
			if m.val.kind == kindNull {
				continue
			}
			sc, err := parseSideEffect(f, &m.val)
			if err != nil {
				return nil, err
			}
			ac.SideEffectApproval = sc
		default:
			return nil, configErr(f, ErrUnknownField,
				`unknown field (want "known_tools", "grants", "whole_tool_grants", "side_effect_approval")`)
		}
	}
	return ac, nil
}

func parseSideEffect(field string, v *value) (*SideEffectApprovalConfig, error) {
	if v.kind == kindBool {
		if !v.b {
			return nil, configErr(field, ErrWrongType, "must be true or an object (omit it, or use null, for no approval layer)")
		}
		return &SideEffectApprovalConfig{}, nil
	}
	if v.kind != kindObject {
		return nil, wrongType(field, "an object or true", v)
	}
	sc := &SideEffectApprovalConfig{}
	for i := range v.obj {
		m := &v.obj[i]
		f := fieldPath(field, m.key)
		switch m.key {
		case "operations":
			if m.val.kind == kindNull {
				continue
			}
			ops, err := parseStringList(f, &m.val)
			if err != nil {
				return nil, err
			}
			if ops == nil {
				ops = []string{}
			}
			sc.Operations = ops
		case "grants":
			g, err := parseOptionalString(f, &m.val)
			if err != nil {
				return nil, err
			}
			sc.Grants = g
		case "grants_downgrade":
			if m.val.kind != kindBool {
				return nil, wrongType(f, "a boolean", &m.val)
			}
			sc.GrantsDowngrade = m.val.b
		default:
			return nil, configErr(f, ErrUnknownField, `unknown field (want "operations", "grants", "grants_downgrade")`)
		}
	}
	return sc, nil
}

func parseStringList(field string, v *value) ([]string, error) {
	if v.kind != kindArray {
		return nil, wrongType(field, "a list of strings", v)
	}
	out := make([]string, 0, len(v.arr))
	for j := range v.arr {
		if v.arr[j].kind != kindString {
			return nil, wrongType(field+"["+strconv.Itoa(j)+"]", "a string", &v.arr[j])
		}
		out = append(out, v.arr[j].s)
	}
	return out, nil
}

func parseOptionalString(field string, v *value) (*string, error) {
	switch v.kind {
	case kindNull:
		return nil, nil
	case kindString:
		s := v.s
		return &s, nil
	}
	return nil, wrongType(field, "a string or null", v)
}

// fieldPath joins a JSON path: a.b for plain keys, a["odd key"] otherwise.
func fieldPath(parent, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '*' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if !plain {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// presetNames lists the LionAGI presets in the order error messages name them.
var presetNames = []string{"allow_all", "deny_all", "read_only", "safe"}

func unknownPreset(field, name string) *ConfigError {
	return configErr(field, ErrUnknownPreset, "unknown preset %q (want one of %s)",
		name, strings.Join(presetNames, ", "))
}

func parseCoding(field string, v *value) (*CodingConfig, error) {
	cc := &CodingConfig{}
	for i := range v.obj {
		m := &v.obj[i]
		f := fieldPath(field, m.key)
		switch m.key {
		case "tools", "operations":
			if m.val.kind != kindObject {
				return nil, wrongType(f, "an object of name → decision", &m.val)
			}
			var ds []KnownDecision
			for j := range m.val.obj {
				e := &m.val.obj[j]
				if e.val.kind != kindString {
					return nil, wrongType(fieldPath(f, e.key), "a string", &e.val)
				}
				ds = append(ds, KnownDecision{Name: e.key, Decision: e.val.s})
			}
			if m.key == "tools" {
				cc.Tools = ds
			} else {
				cc.Operations = ds
			}
		case "unclassified":
			if m.val.kind != kindString {
				return nil, wrongType(f, "a string", &m.val)
			}
			cc.Unclassified = m.val.s
		case "commands":
			if m.val.kind != kindObject {
				return nil, wrongType(f, "an object", &m.val)
			}
			cmds, err := parseCommands(f, &m.val)
			if err != nil {
				return nil, err
			}
			cc.Commands = cmds
		default:
			return nil, configErr(f, ErrUnknownField, `unknown field (want "tools", "operations", "unclassified", "commands")`)
		}
	}
	return cc, nil
}

func parseCommands(field string, v *value) (*CommandsConfig, error) {
	c := &CommandsConfig{}
	for i := range v.obj {
		m := &v.obj[i]
		f := fieldPath(field, m.key)
		var err error
		switch m.key {
		case "read_only":
			c.ReadOnly, err = parseStringList(f, &m.val)
		case "deny_words":
			c.DenyWords, err = parseStringList(f, &m.val)
		case "pipe_into":
			c.PipeInto, err = parseStringList(f, &m.val)
		case "forbid":
			c.Forbid, err = parseRuleMap(f, &m.val)
		case "otherwise":
			if m.val.kind != kindString {
				return nil, wrongType(f, "a string", &m.val)
			}
			c.Otherwise = m.val.s
		default:
			return nil, configErr(f, ErrUnknownField, `unknown field (want "read_only", "forbid", "deny_words", "pipe_into", "otherwise")`)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}
