package builtin_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// lionDestructive are LionAGI's _DESTRUCTIVE_PATTERNS (guard_destructive,
// ADR-0086 D2), compiled there as one IGNORECASE regex, in Go for ASCII
// input where the two engines agree once Python's \s is spelled out (Go's
// \s lacks \v and \x1c-\x1f). Only this test uses them: the gate never runs
// a regular expression.
var lionDestructive = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range []string{
		`\brm\s+-rf\b`, `\bgit\s+push\s+--force\b`, `\bgit\s+reset\s+--hard\b`, `\bgit\s+clean\s+-fd\b`,
		`\bdrop\s+table\b`, `\bdrop\s+database\b`, `\btruncate\s+table\b`, `\bmkfs\b`, `\bdd\s+if=`, `>\s*/dev/sd[a-z]`,
	} {
		out = append(out, regexp.MustCompile(`(?i)`+strings.ReplaceAll(p, `\s`, `[\t\n\v\f\r \x1c-\x1f]`)))
	}
	return out
}()

var destructiveModule struct {
	once sync.Once
	gate *host.Gate
	err  error
}

// destructiveEvaluate asks the embedded destructive module about cmd.
func destructiveEvaluate(t *testing.T, cmd string) abi.GateOutput {
	ctx := context.Background()
	destructiveModule.once.Do(func() {
		h, err := host.New(ctx, host.NewConfig().WithPoolSize(1))
		if err != nil {
			destructiveModule.err = err
			return
		}
		m, _ := builtin.Lookup("destructive")
		mod, err := h.LoadTrusted(ctx, m.Wasm, m.Digest)
		if err == nil {
			destructiveModule.gate, err = h.Gate(ctx, mod, nil)
		}
		destructiveModule.err = err
	})
	if destructiveModule.err != nil {
		t.Fatal(destructiveModule.err)
	}
	args, _ := json.Marshal(map[string]string{"command": cmd})
	out, err := destructiveModule.gate.Evaluate(ctx, abi.GateInput{Tool: "bash", Arguments: args})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return out
}

// FuzzDestructive_AtLeastAsStrict holds the destructive module to its
// README's promise (plugins/destructive/README.md, "At least as strict as
// LionAGI"): for ASCII input, whatever LionAGI's patterns match is denied;
// ASCII letter case never changes a verdict; a denial survives a
// neighbouring command before or after it and being wrapped in bash -c;
// every verdict is allow or deny with a destructive.* reason.
func FuzzDestructive_AtLeastAsStrict(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "rm -fr x", "rm -r -f x", "git push --force", "git push origin +main", "git reset --hard",
		"git clean -xdf", "DROP TABLE t", "truncate table t", "mkfs.ext4 /dev/sda1", "dd of=x if=y",
		"echo x > /dev/sda", "ls -la", "git status", "rm file.txt", "echo 'rm -rf /'", "a;rm\n-rf b",
		"drop/**/table", "git -C x push -f", "cat x >| /dev/nvme0n1", "", "\x00", "'\"\\`$(", "rm -",
		"git", "git -c", "dd", "tee", "> ", "of=/dev/", "drop /*", "truncate --", "rm --=x", "ſudo rm -\u212aRF",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		out := destructiveEvaluate(t, cmd)
		deny := out.Decision == abi.DecisionDeny
		if out.Decision != abi.DecisionAllow && !deny || !strings.HasPrefix(out.ReasonCode, "destructive.") {
			t.Fatalf("%q: verdict %s %s", cmd, out.Decision, out.ReasonCode)
		}
		if deny && !strings.HasPrefix(out.Detail, "Blocked destructive command: ") {
			t.Fatalf("%q: detail %q", cmd, out.Detail)
		}
		if isASCII(cmd) {
			for _, re := range lionDestructive {
				if re.MatchString(cmd) && !deny {
					t.Fatalf("LionAGI pattern %s matches %q but the gate allows it", re, cmd)
				}
			}
			up, lo := destructiveEvaluate(t, strings.ToUpper(cmd)), destructiveEvaluate(t, strings.ToLower(cmd))
			if up.ReasonCode != lo.ReasonCode {
				t.Fatalf("case changes the verdict of %q: %s vs %s", cmd, up.ReasonCode, lo.ReasonCode)
			}
		}
		if deny {
			for _, v := range []string{"true; " + cmd, cmd + " ; true", "bash -c '" + cmd + "'"} {
				if o := destructiveEvaluate(t, v); o.Decision != abi.DecisionDeny {
					t.Fatalf("%q is denied (%s) but %q is allowed", cmd, out.ReasonCode, v)
				}
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
