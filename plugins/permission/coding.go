package permission

import (
	"strconv"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

// The coding family: a decision per tool id and per operation for every
// tool a coding agent may call (known or not), and a read-only
// classification of shell commands. It is govhost's own (neither LionAGI
// nor AgentLane has it) and is what the default coding-agent policy uses:
//
//	{"coding": {
//	   "tools":        {"plan": "allow"},
//	   "operations":   {"read_file": "allow", "execute_command": "commands", "network_access": "require_approval"},
//	   "unclassified": "require_approval",
//	   "commands": {"read_only": ["ls", "git status", "find"],
//	                "forbid":    {"find": ["-delete", "-exec"]},
//	                "deny_words": ["*.ssh/*"], "pipe_into": ["sh", "bash"],
//	                "otherwise": "require_approval"}}}

// Decisions a coding rule may name.
const (
	codingAllow    = "allow"
	codingDeny     = "deny"
	codingApproval = "require_approval"
	// codingCommands classifies the call's "command" argument with the
	// commands section.
	codingCommands = "commands"
)

// CodingConfig is the coding family's configuration.
type CodingConfig struct {
	// Tools decides by tool id first: tool id → decision.
	Tools []KnownDecision
	// Operations decides by operation (the input's, else the one an
	// AgentLane single-operation tool implies): operation → decision.
	Operations []KnownDecision
	// Unclassified decides a call that neither names: a tool without an
	// operation, or an operation the map leaves out. Default
	// "require_approval".
	Unclassified string
	// Commands classifies shell commands for the "commands" decision.
	Commands *CommandsConfig
}

// KnownDecision is one entry of a decision map.
type KnownDecision struct {
	Name     string
	Decision string
}

// CommandsConfig is the read-only classification of shell commands.
type CommandsConfig struct {
	// ReadOnly are command prefixes, as words ("git status"), that are
	// allowed when every simple command of the line matches one.
	ReadOnly []string
	// Forbid lists, per ReadOnly entry, words (or "--opt=" forms of an
	// option) that disqualify it ("find": "-delete").
	Forbid []ToolRules
	// DenyWords are fnmatch patterns; a command line any of whose words
	// (after quote removal, in every nested command) matches one is denied.
	DenyWords []string
	// PipeInto are programs that must not read a pipe ("curl … | sh").
	PipeInto []string
	// Otherwise decides a line that is not read-only: "allow", "deny" or
	// "require_approval" (default).
	Otherwise string
}

type codingPolicy struct {
	tools        map[string]string
	operations   map[string]string
	unclassified string
	commands     *commandRules
}

func newCodingPolicy(c *CodingConfig) (*codingPolicy, error) {
	p := &codingPolicy{tools: map[string]string{}, operations: map[string]string{}, unclassified: c.Unclassified}
	if p.unclassified == "" {
		p.unclassified = codingApproval
	}
	check := func(field, d string) error {
		switch d {
		case codingAllow, codingDeny, codingApproval:
			return nil
		case codingCommands:
			if c.Commands == nil {
				return configErr(field, ErrBadValue, `"commands" needs a commands section`)
			}
			return nil
		}
		return configErr(field, ErrBadValue, `unknown decision %q (want "allow", "deny", "require_approval" or "commands")`, d)
	}
	if err := check("coding.unclassified", p.unclassified); err != nil {
		return nil, err
	}
	for _, t := range c.Tools {
		if err := check(fieldPath("coding.tools", t.Name), t.Decision); err != nil {
			return nil, err
		}
		p.tools[t.Name] = t.Decision
	}
	for _, o := range c.Operations {
		f := fieldPath("coding.operations", o.Name)
		if !abi.IsOperation(o.Name) {
			return nil, configErr(f, ErrUnknownOperation, "unknown operation %q", o.Name)
		}
		if err := check(f, o.Decision); err != nil {
			return nil, err
		}
		p.operations[o.Name] = o.Decision
	}
	if c.Commands != nil {
		r, err := newCommandRules(c.Commands)
		if err != nil {
			return nil, err
		}
		p.commands = r
	}
	return p, nil
}

func newCommandRules(c *CommandsConfig) (*commandRules, error) {
	r := &commandRules{otherwise: c.Otherwise, pipeInto: map[string]bool{}}
	if r.otherwise == "" {
		r.otherwise = codingApproval
	}
	switch r.otherwise {
	case codingAllow, codingDeny, codingApproval:
	default:
		return nil, configErr("coding.commands.otherwise", ErrBadValue, `unknown decision %q (want "allow", "deny" or "require_approval")`, r.otherwise)
	}
	index := map[string]int{}
	for i, text := range c.ReadOnly {
		words := parseCommandLine(text)
		if len(words.commands) != 1 || words.opaque || words.writes || words.commands[0].assigns {
			return nil, configErr("coding.commands.read_only["+strconv.Itoa(i)+"]", ErrBadValue, "must be one simple command's leading words, got %q", text)
		}
		index[text] = len(r.readOnly)
		r.readOnly = append(r.readOnly, readOnlyEntry{text: text, prefix: words.commands[0].words})
	}
	for _, f := range c.Forbid {
		i, ok := index[f.Tool]
		if !ok {
			return nil, configErr(fieldPath("coding.commands.forbid", f.Tool), ErrBadValue, "names no read_only entry")
		}
		r.readOnly[i].forbid = append(r.readOnly[i].forbid, f.Patterns...)
	}
	for _, w := range c.DenyWords {
		r.denyWords = append(r.denyWords, fnmatch.Compile(w))
		r.denySource = append(r.denySource, w)
	}
	for _, prog := range c.PipeInto {
		r.pipeInto[prog] = true
	}
	return r, nil
}

func (p *codingPolicy) evaluate(in *abi.GateInput) abi.GateOutput {
	args, err := decodeArguments(in.Arguments, nil)
	if err != nil {
		return invalidArguments(in, err)
	}
	base := requestBase(in, &args)
	op := in.Operation
	if op == "" {
		if o, ok := toolOperation(in.Tool); ok {
			op = o.String()
		}
	}
	if o, ok := parseOperation(op); ok {
		base.op, base.hasOp = o, true
	}
	code, decision, rule := CodeCodingTool, "", ""
	if d, ok := p.tools[in.Tool]; ok {
		decision, rule = d, "tools."+in.Tool
	} else if d, ok := p.operations[op]; ok {
		code, decision, rule = CodeCodingOperation, d, "operations."+op
	} else {
		code, decision = CodeCodingUnclassified, p.unclassified
	}
	detail := rule + ": " + decision
	if decision == codingCommands {
		cmd, _ := stringArg(&args, "command")
		v := p.commands.classify(cmd)
		code, decision, detail, rule = v.code, v.decision, v.detail, v.rule
	} else if code == CodeCodingUnclassified {
		detail = "no tools or operations entry names tool " + pyQuote(in.Tool) + " operation " + pyQuote(op)
	}
	out := abi.GateOutput{ReasonCode: code, Detail: detail, MatchedRule: rule}
	switch decision {
	case codingAllow:
		out.Decision = abi.DecisionAllow
	case codingApproval:
		out.Decision = abi.DecisionRequireApproval
		out.Message, out.DenyMessage = formatApproval(&base), formatDenied(&base)
	default:
		out.Decision = abi.DecisionDeny
		out.Message = formatDenied(&base)
	}
	return out
}
