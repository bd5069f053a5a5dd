package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/policy/profiles"
)

// frontEndCall is a (tool id, operation) a front end can produce.
type frontEndCall struct{ from, tool, op string }

// frontEndCalls lists what every front end produces: each agent's tool
// table (every operation its rule can choose), the MCP mapping of the
// reference filesystem server, an MCP tool through an agent, and a tool
// no table knows.
func frontEndCalls(t *testing.T) []frontEndCall {
	t.Helper()
	var calls []frontEndCall
	for _, a := range agents.Agents() {
		d, err := agents.Lookup(a)
		require.NoError(t, err)
		for name, spec := range d.Tools {
			from := fmt.Sprintf("%s %s", a, name)
			require.Contains(t, abi.CodingTools[:], spec.Tool, "%s: tool id %q is not in abi's vocabulary", from, spec.Tool)
			if spec.Rule == agents.OpByPatch {
				// One call per file: write for added and moved-to files,
				// patch for updated and deleted ones.
				for _, op := range abi.ToolOperations[abi.ToolWrite] {
					calls = append(calls, frontEndCall{from, abi.ToolWrite, op})
				}
				calls = append(calls, frontEndCall{from, abi.ToolPatch, abi.OpModifyFile})
				continue
			}
			ops := []string{spec.Operation}
			if spec.Rule != agents.OpFixed {
				ops = abi.ToolOperations[spec.Tool]
			}
			for _, op := range ops {
				if op != "" {
					require.Contains(t, abi.ToolOperations[spec.Tool], op, "%s: operation %q is not one tool %q declares", from, op, spec.Tool)
				}
				calls = append(calls, frontEndCall{from, spec.Tool, op})
			}
		}
		calls = append(calls, frontEndCall{fmt.Sprintf("%s MCP tool", a), agents.MCPToolID("github", "create_issue"), ""})
	}
	for _, id := range mcp.FilesystemToolIDs("fs") {
		tool := id[len("fs/"):]
		spec, _ := mcp.Mapper{Server: "fs"}.Spec(mcp.FilesystemUpstream, tool, nil)
		require.True(t, spec.Operation == "" || abi.IsOperation(spec.Operation), "mcp %s: operation %q", tool, spec.Operation)
		calls = append(calls, frontEndCall{"mcp " + tool, id, spec.Operation})
	}
	return append(calls, frontEndCall{"an unknown tool", "SomeNewTool", ""})
}

// TestDefaultPolicy_BindsEveryFrontEndTool fails when a front end produces
// a tool id the default policy does not bind (the reader/editor vs
// read/write mismatch of issue 22), or a vocabulary tool and operation
// the coding gate would only treat as unclassified (and so ask about).
func TestDefaultPolicy_BindsEveryFrontEndTool(t *testing.T) {
	calls := frontEndCalls(t)
	resolve := func(ref string) (string, error) {
		m, ok := builtin.Lookup(ref)
		if !ok {
			return "", fmt.Errorf("no built-in %q", ref)
		}
		return m.Digest, nil
	}
	for _, name := range profiles.Names() {
		data, err := profiles.Render(name, t.TempDir())
		require.NoError(t, err)
		snap, err := policyfile.Load(data, name, resolve)
		require.NoError(t, err, name)
		var coding struct {
			Tools      map[string]string `json:"tools"`
			Operations map[string]string `json:"operations"`
		}
		for _, b := range snap.GateBindings() {
			var cfg struct {
				Coding *json.RawMessage `json:"coding"`
			}
			if json.Unmarshal([]byte(b.Config()), &cfg) == nil && cfg.Coding != nil {
				require.NoError(t, json.Unmarshal(*cfg.Coding, &coding))
			}
		}
		require.NotNil(t, coding.Operations, "%s: the profile has a coding gate", name)
		for _, c := range calls {
			bound := false
			for _, b := range snap.GateBindings() {
				bound = bound || b.AppliesTo(c.tool)
			}
			require.True(t, bound, "%s: %s produces tool id %q, which no gate of the default policy binds", name, c.from, c.tool)
			if !slices.Contains(abi.CodingTools[:], c.tool) && c.op == "" {
				continue // unknown tools ask, on purpose
			}
			_, byTool := coding.Tools[c.tool]
			_, byOp := coding.Operations[c.op]
			require.True(t, byTool || byOp, "%s: %s produces %s / %q, which the coding gate only treats as unclassified", name, c.from, c.tool, c.op)
		}
	}
	require.Contains(t, calls, frontEndCall{"claude Read", abi.ToolRead, abi.OpReadFile})
}
