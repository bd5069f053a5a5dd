package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/plugins/destructive"
	"github.com/govhost/govhost/plugins/internal/gatetable"
)

// The differential fuzz targets below hold each built-in gate's embedded
// module (Rust, plugins/rust) to the Go implementation it replaced
// (plugins/<gate>, run natively): on any configuration and input, both
// must give the same GateOutput, field for field. The Go side sees the
// input after the same wire round trip the module sees (abi.AppendGateInput
// then abi.DecodeGateInput), so invalid UTF-8 is replaced alike. CI runs
// each target briefly (.ci/run); a switch of a gate to a new module ran its
// target for at least ten minutes first (docs/gates-builtin.md).

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
}

func (d *differ) load(t testing.TB) {
	d.once.Do(func() {
		ctx := context.Background()
		d.h, d.err = host.New(ctx, host.NewConfig().WithPoolSize(1))
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

var destructiveDiff = &differ{name: "destructive", native: func(config []byte) (func(abi.GateInput) abi.GateOutput, error) {
	g, err := destructive.New(config)
	if err != nil {
		return nil, err
	}
	return g.Evaluate, nil
}}

// FuzzDifferential_Destructive: the destructive module against
// plugins/destructive. raw, when it is valid JSON and mode is odd, is the
// whole arguments document; otherwise cmd is spelled by commandArguments.
func FuzzDifferential_Destructive(f *testing.F) {
	seedTable(f, "destructive", func(c gatetable.Case) {
		f.Add([]byte(c.Config), c.Input.Tool, []byte(c.Input.Arguments), "", uint8(1))
	})
	for i, s := range []string{
		"rm -rf /", "rm -fr x", "git push origin +main", "git -C x push -f", "drop/**/table t", "DROP TEMPORARY TABLE x",
		"truncate -- \n table", "echo x >| /dev/nvme0n1", "tee /dev//sda", "dd of=/dev/./sdb if=x", "mkfs.ext4 /dev/sda1",
		"ſudo rm -\u212aRF", "r'm' -r\"f\" x", "a;rm\n-rf b", "\x00\xff\xfe rm -rf", "git clean -xdf", "newfs_msdos",
		"echo > /dev/mapper/x", "`rm -rf x`", "$(git reset --hard)", "drop /* x", "mkswap", "git --git-dir x reset --h",
	} {
		f.Add([]byte(nil), "bash", []byte(nil), s, uint8(i*2))
	}
	for _, raw := range []string{`null`, `[]`, `{}`, `{"command":5}`, `{"command":null}`, `"x"`, `{"command":"x","command":1}`,
		`{"comm\u0061nd":"git push -f"}`, `{"command":"\ud800\udc00 rm -rf \udc00"}`, `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
		`{"command":"ls","a":` + strings.Repeat(`[{"b":`, 4990) + `1` + strings.Repeat(`}]`, 4990) + `}`} {
		f.Add([]byte(`{}`), "", []byte(raw), "", uint8(1))
	}
	f.Add([]byte(`{"x":1}`), "bash", []byte(nil), "ls", uint8(0))
	f.Add([]byte(`[]`), "bash", []byte(nil), "ls", uint8(0))
	f.Add([]byte(`null`), "bash", []byte(nil), "ls", uint8(0))
	f.Fuzz(func(t *testing.T, config []byte, tool string, raw []byte, cmd string, mode uint8) {
		args := raw
		if mode%2 == 0 || !abi.ValidJSON(raw) {
			args = commandArguments(cmd, mode/2)
		}
		if !utf8.ValidString(tool) && mode%4 == 1 {
			tool = strings.ToValidUTF8(tool, "?")
		}
		destructiveDiff.check(t, config, abi.GateInput{Tool: tool, Arguments: args})
	})
}
