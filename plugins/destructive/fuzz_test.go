package destructive_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/destructive"
)

// lionRegexps translates LionAGI's patterns to Go for ASCII input, where the
// two engines agree once Python's \s is spelled out (Go's \s lacks \v and
// \x1c-\x1f). Used only in tests: the gate itself never uses regexp.
var lionRegexps = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range destructive.LionRules {
		out = append(out, regexp.MustCompile(`(?i)`+strings.ReplaceAll(p, `\s`, `[\t\n\v\f\r \x1c-\x1f]`)))
	}
	return out
}()

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var seeds = []string{
	"rm -rf /", "rm -fr x", "rm -r -f x", "git push --force", "git push origin +main", "git reset --hard",
	"git clean -xdf", "DROP TABLE t", "truncate table t", "mkfs.ext4 /dev/sda1", "dd of=x if=y",
	"echo x > /dev/sda", "ls -la", "git status", "rm file.txt", "echo 'rm -rf /'", "a;rm\n-rf b",
	"drop/**/table", "git -C x push -f", "cat x >| /dev/nvme0n1", "", "\x00", "'\"\\`$(", "rm -",
	"git", "git -c", "dd", "tee", "> ", "of=/dev/", "drop /*", "truncate --", "rm --=x",
}

// FuzzClassify checks that classification never panics and that:
//  1. anything LionAGI's regex list matches is denied (ASCII input);
//  2. ASCII case does not matter;
//  3. a deny survives a neighbouring command before or after it, and being
//     wrapped in bash -c '...';
//  4. Evaluate's verdict is well formed.
func FuzzClassify(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	g, err := destructive.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		code, _ := destructive.Classify(cmd)
		deny := code != destructive.ReasonAllowed
		if !strings.HasPrefix(code, "destructive.") {
			t.Fatalf("reason %q", code)
		}
		if isASCII(cmd) {
			for i, re := range lionRegexps {
				if re.MatchString(cmd) && !deny {
					t.Fatalf("LionAGI pattern %s matches %q but the gate allows it", destructive.LionRules[i], cmd)
				}
			}
			up, _ := destructive.Classify(strings.ToUpper(cmd))
			lo, _ := destructive.Classify(strings.ToLower(cmd))
			if up != lo {
				t.Fatalf("case changes the verdict of %q: %s vs %s", cmd, up, lo)
			}
		}
		if deny {
			for _, v := range []string{"true; " + cmd, cmd + " ; true", "bash -c '" + cmd + "'"} {
				if c, _ := destructive.Classify(v); c == destructive.ReasonAllowed {
					t.Fatalf("%q is denied (%s) but %q is allowed", cmd, code, v)
				}
			}
		}
		out := g.Evaluate(abi.GateInput{Tool: "bash", Arguments: mustJSON(t, map[string]string{"command": cmd})})
		if !out.Decision.Valid() || out.Decision == abi.DecisionRequireApproval {
			t.Fatalf("decision %q", out.Decision)
		}
		if (out.Decision == abi.DecisionDeny) != deny || out.ReasonCode != code {
			t.Fatalf("Evaluate %s/%s disagrees with Classify %s", out.Decision, out.ReasonCode, code)
		}
		if deny && !strings.HasPrefix(out.Detail, "Blocked destructive command: ") {
			t.Fatalf("detail %q", out.Detail)
		}
	})
}

// FuzzEvaluateArguments feeds arbitrary bytes as the arguments object: the
// gate must not panic and must fail closed on anything that is not an
// object.
func FuzzEvaluateArguments(f *testing.F) {
	for _, s := range []string{`{"command":"rm -rf /"}`, `{}`, `null`, `[]`, `{"command":5}`, `{"a":{"b":[1,2,{"c":"d"}]},"command":"ls"}`, `{"comm\u0061nd":"git push -f"}`, `{"command":"x",}`, `{"command"`} {
		f.Add([]byte(s))
	}
	g, _ := destructive.New(nil)
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := g.Evaluate(abi.GateInput{Tool: "bash", Arguments: raw})
		if out.Decision != abi.DecisionAllow && out.Decision != abi.DecisionDeny {
			t.Fatalf("decision %q", out.Decision)
		}
		if out.Decision == abi.DecisionAllow && out.ReasonCode == destructive.ReasonAllowed {
			// A command was found and judged harmless: the arguments must be
			// a valid JSON object with a string command.
			var m map[string]any
			if err := jsonUnmarshal(raw, &m); err != nil {
				t.Fatalf("allowed malformed arguments %q", raw)
			}
			if _, ok := m["command"].(string); !ok {
				t.Fatalf("allowed non-string command in %q", raw)
			}
		}
	})
}
