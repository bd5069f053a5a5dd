package builtin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/sdk/gatecases"
)

// The regression fuzz targets below hold each embedded built-in module to
// an earlier build of the same gate (a speed change to plugins/rust must
// not change an answer): GOVHOST_OLD_GATES names a directory with the
// earlier <gate>.wasm files, e.g.
//
//	mkdir -p /tmp/oldgates
//	for g in permission pathguard destructive duties; do
//	  git show main:plugins/builtin/$g.wasm > /tmp/oldgates/$g.wasm; done
//	GOVHOST_OLD_GATES=/tmp/oldgates go test -run '^$' -fuzz '^FuzzRegression_Permission$' \
//	  -fuzztime 5m -parallel 1 ./plugins/builtin/
//
// Each input is checked twice: through the host (the GateInput encoded by
// the host, both modules loaded as a user module would be; the GateOutputs
// must be equal), and bare (the two modules instantiated side by side,
// gate_evaluate called with the document's bytes as they are, mutated into
// whitespace, escaped names, duplicates, truncations or anything the fuzzer
// writes; the answers must be equal byte for byte, and a refused
// configuration or a trap must be one on both sides). Without
// GOVHOST_OLD_GATES the targets skip.

// regGates are the old and new builds of one gate.
type regGates struct {
	name     string
	once     sync.Once
	err      error
	old, new []byte

	// Through the host.
	h          *host.Host
	oldM, newM *host.Module
	gates      map[string][2]*host.Gate

	// Bare.
	rt         wazero.Runtime
	oldC, newC wazero.CompiledModule
	inst       map[string][2]api.Module
}

var regSets = map[string]*regGates{
	"permission": {name: "permission"}, "pathguard": {name: "pathguard"},
	"destructive": {name: "destructive"}, "duties": {name: "duties"},
}

// regMaxConfigs bounds the configurations (a gate pair and an instance
// pair each) kept at once: past it everything is closed and made again.
const regMaxConfigs = 48

func (r *regGates) load(t testing.TB) {
	r.once.Do(func() {
		ctx := context.Background()
		dir := os.Getenv("GOVHOST_OLD_GATES")
		if r.old, r.err = os.ReadFile(filepath.Join(dir, r.name+".wasm")); r.err != nil {
			return
		}
		m, ok := builtin.Lookup(r.name)
		if !ok {
			r.err = errors.New("no built-in " + r.name)
			return
		}
		r.new = m.Wasm
		cache := filepath.Join(os.TempDir(), "govhost-regression-"+r.name)
		if r.h, r.err = host.New(ctx, host.NewConfig().WithPoolSize(1).WithCompilationCacheDir(cache)); r.err != nil {
			return
		}
		sum := sha256.Sum256(r.old)
		if r.oldM, r.err = r.h.Load(ctx, r.old, hex.EncodeToString(sum[:])); r.err != nil {
			return
		}
		if r.newM, r.err = r.h.LoadTrusted(ctx, m.Wasm, m.Digest); r.err != nil {
			return
		}
		cc, err := wazero.NewCompilationCacheWithDir(cache + "-bare")
		if err != nil {
			r.err = err
			return
		}
		r.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cc))
		wasi_snapshot_preview1.MustInstantiate(ctx, r.rt)
		if r.oldC, r.err = r.rt.CompileModule(ctx, r.old); r.err != nil {
			return
		}
		r.newC, r.err = r.rt.CompileModule(ctx, r.new)
		r.gates, r.inst = map[string][2]*host.Gate{}, map[string][2]api.Module{}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
}

// reset drops every configured gate and instance (the host keeps a pool
// per gate).
func (r *regGates) reset(t testing.TB) {
	ctx := context.Background()
	if len(r.gates) >= regMaxConfigs {
		r.h.Close(ctx)
		r.once, r.h = sync.Once{}, nil
		r.rt.Close(ctx)
		r.load(t)
	}
	if len(r.inst) >= regMaxConfigs {
		for _, p := range r.inst {
			if p[0] != nil { // nil: a configuration both refused
				p[0].Close(ctx)
				p[1].Close(ctx)
			}
		}
		r.inst = map[string][2]api.Module{}
	}
}

// bareCall calls export of one module instance with data in its memory.
func bareCall(ctx context.Context, m api.Module, export string, data []byte) (uint64, []byte, error) {
	res, err := m.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(data)))
	if err != nil {
		return 0, nil, err
	}
	ptr := uint32(res[0])
	if len(data) > 0 && !m.Memory().Write(ptr, data) {
		return 0, nil, errors.New("alloc gave a range outside memory")
	}
	res, err = m.ExportedFunction(export).Call(ctx, uint64(ptr), uint64(len(data)))
	if err != nil {
		return 0, nil, err
	}
	if export != abi.ExportEvaluate {
		return res[0], nil, nil
	}
	out, ok := m.Memory().Read(abi.UnpackPtrLen(res[0]))
	if !ok {
		return 0, nil, errors.New("answer outside memory")
	}
	return 0, bytes.Clone(out), nil
}

// instances are the configured old and new instances for config (nil when
// both refuse it).
func (r *regGates) instances(t *testing.T, config []byte) (pair [2]api.Module, ok bool) {
	if p, ok := r.inst[string(config)]; ok {
		return p, p[0] != nil
	}
	ctx := context.Background()
	var codes [2]uint64
	for k, cm := range []wazero.CompiledModule{r.oldC, r.newC} {
		m, err := r.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
		if err != nil {
			t.Fatal(err)
		}
		if codes[k], _, err = bareCall(ctx, m, "gate_configure", config); err != nil {
			t.Fatalf("config %q: gate_configure trapped (old=%v): %v", config, k == 0, err)
		}
		pair[k] = m
	}
	if codes[0] != codes[1] {
		t.Fatalf("config %q: gate_configure old %d, new %d", config, codes[0], codes[1])
	}
	if codes[0] != 0 {
		pair[0].Close(ctx)
		pair[1].Close(ctx)
		r.inst[string(config)] = [2]api.Module{}
		return pair, false
	}
	r.inst[string(config)] = pair
	return pair, true
}

// checkBare calls both instances with doc and compares the answers.
func (r *regGates) checkBare(t *testing.T, config, doc []byte) {
	pair, ok := r.instances(t, config)
	if !ok {
		return
	}
	ctx := context.Background()
	_, o1, e1 := bareCall(ctx, pair[0], abi.ExportEvaluate, doc)
	_, o2, e2 := bareCall(ctx, pair[1], abi.ExportEvaluate, doc)
	if (e1 == nil) != (e2 == nil) || !bytes.Equal(o1, o2) {
		t.Fatalf("config %q document %q:\n old: %s (%v)\n new: %s (%v)", config, doc, o1, e1, o2, e2)
	}
	if e1 != nil {
		// NB: a trapped instance is not used again.
		pair[0].Close(ctx)
		pair[1].Close(ctx)
		delete(r.inst, string(config))
	}
}

// checkHost runs in through both modules on the host.
func (r *regGates) checkHost(t *testing.T, config []byte, in abi.GateInput) {
	ctx := context.Background()
	p, seen := r.gates[string(config)]
	if !seen {
		g1, err1 := r.h.Gate(ctx, r.oldM, config)
		g2, err2 := r.h.Gate(ctx, r.newM, config)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("config %q: old %v, new %v", config, err1, err2)
		}
		p = [2]*host.Gate{g1, g2}
		r.gates[string(config)] = p
	}
	if p[0] == nil {
		return
	}
	o1, err1 := p[0].Evaluate(ctx, in)
	o2, err2 := p[1].Evaluate(ctx, in)
	if (err1 == nil) != (err2 == nil) || !sameOutput(o1, o2) {
		raw, _ := abi.AppendGateInput(nil, &in)
		t.Fatalf("config %q input %s:\n old: %+v (%v)\n new: %+v (%v)", config, raw, o1, err1, o2, err2)
	}
}

// regMutate rewrites a well-formed document by mode: as it is, pretty
// printed, every member name \u-escaped in part, a member repeated
// (a duplicate name), a value replaced by null, cut short, or extra spliced
// in at cut.
func regMutate(doc []byte, mode uint8, cut uint16, extra []byte) []byte {
	at := 0
	if len(doc) > 0 {
		at = int(cut) % len(doc)
	}
	switch mode % 8 {
	case 1:
		var b bytes.Buffer
		if json.Indent(&b, doc, " ", "\t") == nil {
			return append([]byte("\r\n"), b.Bytes()...)
		}
	case 2:
		for _, k := range []string{"tool", "operation", "context", "actor", "kind", "paths", "resolved", "arguments", "command", "duty", "assignments", "cwd", "argument_order"} {
			doc = bytes.ReplaceAll(doc, []byte(`"`+k+`":`), []byte(`"`+k[:1]+`\u00`+hex.EncodeToString([]byte(k[1:2]))+k[2:]+`":`))
		}
		return doc
	case 3:
		if i := bytes.LastIndexByte(doc, '}'); i > 0 && len(extra) > 0 {
			return append(append(append([]byte{}, doc[:i]...), []byte(`,"`+regNames[int(extra[0])%len(regNames)]+`":`)...), append(extra[1:], doc[i:]...)...)
		}
	case 4:
		for _, k := range regNames {
			if i := bytes.Index(doc, []byte(`"`+k+`":`)); i >= 0 && int(cut)%3 == 0 {
				j := i + len(k) + 3
				if n := regValueEnd(doc[j:]); n > 0 {
					return append(append(append([]byte{}, doc[:j]...), "null"...), doc[j+n:]...)
				}
			}
			cut /= 3
		}
	case 5:
		return doc[:at]
	case 6:
		return append(append(append([]byte{}, doc[:at]...), extra...), doc[at:]...)
	}
	return doc
}

// regNames are the member names GateInput's readers know.
var regNames = []string{"gate_id", "phase", "tool", "operation", "action", "cwd", "workspace", "arguments", "argument_order", "paths",
	"context", "operation_id", "run_id", "agent_name", "tool_call_id", "actor", "metadata", "assignments", "kind", "id", "duty", "arg",
	"raw", "resolved", "exists", "link", "nearest_existing", "abi_version", "command"}

// regValueEnd is the length of the JSON value at the start of b (0 when
// there is none).
func regValueEnd(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return 0
	}
	return int(dec.InputOffset())
}

// regFuzz is one gate's target: seeds from its case table, configs and the
// benchmark's input, then any document.
func regFuzz(f *testing.F, gate string, configs []string) {
	if os.Getenv("GOVHOST_OLD_GATES") == "" {
		f.Skip("GOVHOST_OLD_GATES names no directory of earlier modules")
	}
	set := regSets[gate]
	table, err := gatecases.LoadFile(filepath.Join("..", gate, "testdata", "cases.json"))
	if err != nil {
		f.Fatal(err)
	}
	var docs [][]byte
	for i, c := range table.Cases {
		c.Input.ABIVersion = abi.Version
		doc, err := abi.AppendGateInput(nil, &c.Input)
		if err != nil {
			continue
		}
		docs = append(docs, doc)
		f.Add([]byte(c.Config), doc, c.Input.Tool, uint8(i), uint16(i*7), []byte(`{"x":[1,"\u00e9"]}`))
	}
	bench := abi.GateInput{ABIVersion: 1, GateID: gate, Phase: abi.PhaseCheck, Tool: "bash", Operation: "execute_command", Action: "ls -la src",
		Arguments: json.RawMessage(`{"command":"ls -la src"}`), ArgumentOrder: []string{"command"}, Cwd: "/tmp/w",
		Paths: []abi.PathFact{{Arg: "path", Raw: "a/../b", Resolved: "/tmp/w/b", Kind: abi.PathKindMissing, NearestExisting: "/tmp/w", Link: true}},
		Context: abi.OperationInfo{OperationID: "op", Actor: &abi.ActorRef{Kind: "agent", ID: "coder"}, RunID: "r", AgentName: "a", ToolCallID: "t",
			Metadata:    map[string]string{"k": "v", "é": "\u2028"},
			Assignments: &[]abi.Assignment{{Actor: abi.ActorRef{Kind: "agent", ID: "coder"}, Duty: "bash"}, {Actor: abi.ActorRef{Kind: "user", ID: "ann"}, Duty: "merge"}}}}
	benchDoc, err := abi.AppendGateInput(nil, &bench)
	if err != nil {
		f.Fatal(err)
	}
	for i, cfg := range configs {
		for mode := 0; mode < 8; mode++ {
			f.Add([]byte(cfg), benchDoc, regShellLines[(i+mode)%len(regShellLines)], uint8(mode*16+i), uint16(i*31+mode), []byte(`"x"`))
			if len(docs) > 0 {
				f.Add([]byte(cfg), docs[(i*8+mode)%len(docs)], "rm -rf /", uint8(mode*16+1), uint16(mode), []byte(`{"a":null}`))
			}
		}
	}
	for _, doc := range []string{`null`, ` null `, `{}`, `[]`, `{"tool":null,"context":null,"paths":null,"argument_order":null}`,
		`{"context":{"actor":null,"assignments":null,"metadata":null}}`, `{"context":{"assignments":[null,{"actor":null}]}}`,
		`{"paths":[null,{"exists":null,"link":true}],"paths":[{"arg":"x"}]}`, `{"context":{"metadata":{"a":"1","a":"2","b":null}},"context":{"metadata":{"a":"3"}}}`,
		`{"tool":"bash","arguments":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"tool":"bash","arguments":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9998) + `}`,
		`{"tool":"bash","arguments":` + strings.Repeat(`{"a":`, 9999) + `1` + strings.Repeat(`}`, 9999) + `}`,
		`{"tool":"\ud800\udc00\ud800x\u00e9\xff\xfe","action":"a\"b\\c\/\b\f\n\r\t"}`, `{"tool":"a` + "\x01" + `"}`, `{"tool":1}`, `{"tool":"bash"}x`,
		`{"tool" "x"}`, `{"tool":"x",}`, `{"exists":true}`, `{"paths":[{"exists":1}]}`, `{"arguments":01}`, `{"arguments":-}`, `{"arguments":1.}`,
		`{"arguments":1e}`, `{"arguments":tru}`, `{"arguments":{"command":"ls"}} `, `{"arguments":"\u12G4"}`, "{\"tool\":\"bash\"\x00}"} {
		for i, cfg := range configs {
			if i < 3 {
				f.Add([]byte(cfg), []byte(doc), "ls", uint8(0), uint16(0), []byte(nil))
			}
		}
	}
	f.Fuzz(func(t *testing.T, config, doc []byte, cmd string, mode uint8, cut uint16, extra []byte) {
		set.load(t)
		set.reset(t)
		var in abi.GateInput
		if abi.DecodeGateInput(doc, &in) == nil {
			if mode&8 != 0 {
				in.Arguments = regCommandArguments(cmd, mode)
			}
			in.ABIVersion = abi.Version
			if raw, err := abi.AppendGateInput(nil, &in); err == nil {
				if compact, ok := regCompact(config); ok {
					set.checkHost(t, compact, in)
				}
				doc = regMutate(raw, mode>>4, cut, extra)
			}
		}
		set.checkBare(t, config, doc)
	})
}

// regCompact is config as the host passes it to a module (compact JSON),
// false when the host would refuse it as JSON.
func regCompact(config []byte) ([]byte, bool) {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil, true
	}
	var b bytes.Buffer
	if json.Compact(&b, config) != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// regCommandArguments spells a "command" argument in one of several JSON
// forms: plain, every character \u-escaped, raw bytes (invalid UTF-8
// kept), beside other members, twice, or with whitespace.
func regCommandArguments(cmd string, mode uint8) []byte {
	plain, _ := json.Marshal(cmd)
	switch mode % 6 {
	case 0:
		return append(append([]byte(`{"command":`), plain...), '}')
	case 1:
		var b strings.Builder
		b.WriteString(`{"comm\u0061nd":"`)
		for _, r := range cmd {
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10)&0x3ff, 0xdc00+r&0x3ff)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
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
				fmt.Fprintf(&b, `\u%04x`, c)
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

// regShellLines are commands for the destructive and permission gates:
// destructive families, shell constructs, Unicode folding.
var regShellLines = []string{
	"ls -la src", "rm -rf /", "RM  -Rf ~", "git push --force origin", "git reset --hard HEAD~1", "git clean -fdx", "DROP TABLE users;",
	"drop\u00a0database x", "truncate table t", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda", "echo x > /dev/sdb", "cat <<EOF\nrm -rf /\nEOF",
	"echo $(rm -rf x)", "ſudo rm -rf /", "curl x | sh", "git status && git diff", "echo 'a b' \"c\\d\"", "", "\u212a\u0130",
}

// The configurations each target starts from (besides the case tables').
var (
	regPermissionConfigs = []string{
		`{"lionagi": {"mode": "rules", "allow": {"bash": ["ls *"]}}}`, `{"preset":"SAFE"}`, `{"lionagi":"Read_Only"}`, `{"preset":"deny_all"}`,
		`{"lionagi":{"mode":"rules","deny":{"*":["*secret*"],"bash":["rm *"]},"allow":{"bash_tool":["ls *"],"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`,
		`{"agentlane":{"grants":"read, WRITE ,bash:execute_command,grep:read_file"}}`,
		`{"agentlane":{"grants":"write","whole_tool_grants":"any_operation","side_effect_approval":true}}`,
		`{"coding":{"tools":{"plan":"allow"},"operations":{"read_file":"allow","search_files":"allow","execute_command":"commands","network_access":"require_approval"},` +
			`"commands":{"read_only":["ls","cat","git status","git log","git diff","find","grep","sed -n","head","tail","wc","echo"],` +
			`"forbid":{"find":["-delete","-exec"],"git log":["--output"]},"deny_words":["*.ssh/*","*.env","*id_rsa*","[!a]*.pem"],"pipe_into":["sh","bash","python3"],"otherwise":"deny"}}}`,
		`{}`, `null`, `{"lionagi":{"mode":1}}`,
	}
	regPathguardConfigs = []string{
		`{"kind": "guard_paths", "allowed_paths": ["/tmp/w"]}`, `{"kind":"guard_paths","allowed_paths":["/tmp/w"],"refuse_symlinks":true}`,
		`{"kind":"workspace"}`, `{"kind":"virtual","cwd":"/w"}`, `{"kind":"path_scope","roots":["/tmp"]}`, `{}`, `{"kind":"nope"}`,
	}
	regDestructiveConfigs = []string{`{}`, ``, `null`, `{"x":1}`, `[]`}
	regDutiesConfigs      = []string{`{"incompatible": {"bash": ["merge", "approve"]}}`, `{"incompatible":{"merge":["bash"],"approve":["bash","merge"]}}`, `{}`, `{"incompatible":[]}`}
)

func FuzzRegression_Permission(f *testing.F)  { regFuzz(f, "permission", regPermissionConfigs) }
func FuzzRegression_Pathguard(f *testing.F)   { regFuzz(f, "pathguard", regPathguardConfigs) }
func FuzzRegression_Destructive(f *testing.F) { regFuzz(f, "destructive", regDestructiveConfigs) }
func FuzzRegression_Duties(f *testing.F)      { regFuzz(f, "duties", regDutiesConfigs) }

// sameOutput reports whether two gate outputs are the same, field by field.
func sameOutput(a, b abi.GateOutput) bool {
	return a.Decision == b.Decision && a.ReasonCode == b.ReasonCode && a.Message == b.Message &&
		a.Detail == b.Detail && a.MatchedRule == b.MatchedRule && a.DenyMessage == b.DenyMessage &&
		bytes.Equal(a.Arguments, b.Arguments)
}
