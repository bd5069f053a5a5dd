package destructive_test

import (
	"fmt"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/destructive"
)

func Example() {
	g, err := destructive.New(nil)
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{`git push origin main`, `git push origin feature -f`, `rm -rf build`} {
		out := g.Evaluate(abi.GateInput{Tool: "bash", Arguments: []byte(`{"command":"` + cmd + `"}`)})
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-27s %-5s %s %s", cmd, out.Decision, out.ReasonCode, out.MatchedRule)))
	}
	// Output:
	// git push origin main        allow destructive.none
	// git push origin feature -f  deny  destructive.git_push_force
	// rm -rf build                deny  destructive.rm_recursive_force \brm\s+-rf\b
}
