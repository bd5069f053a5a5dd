package govhost

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// OneGatePolicyID names the policy OneGatePolicy builds; it is never
// stored.
var OneGatePolicyID = uuid.MustParse("00000000-0000-4000-8000-00000000e7a1")

// OneGatePolicy returns the policy a dry run of one gate evaluates
// (`govhost eval --gate`): one hard binding, to every tool, of gateRef (a
// built-in gate's name, or a .wasm file relative to dir unless absolute,
// made available to g) with config, a JSON object. It is never stored.
func (g *Gates) OneGatePolicy(gateRef string, config []byte, dir string) (governance.PolicySnapshot, error) {
	canon, err := policyfile.GateConfig(gateRef, config)
	if err != nil {
		return governance.PolicySnapshot{}, fmt.Errorf("config: %w", err)
	}
	digest, err := g.Resolver(dir)(gateRef)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
		GateID: strings.TrimSuffix(filepath.Base(gateRef), ".wasm"), AdapterID: AdapterWasm, Level: governance.LevelHard,
		ToolIDs: []string{"*"}, ModuleDigest: digest, Config: canon,
	})
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	return governance.NewPolicySnapshot(OneGatePolicyID, "eval", []governance.ExecutableGateBinding{b})
}

// Hold makes a parsed policy file's modules available to g without
// storing its version (a dry run of the file, `govhost eval --policy`); g
// without a folder keeps them in memory.
func (g *Gates) Hold(f PolicyFile) error {
	var errs []error
	for digest, wasm := range f.Modules {
		if _, err := g.store(digest, wasm); err != nil {
			errs = append(errs, fmt.Errorf("govhost: module %s: %w", digest, err))
		}
	}
	return errors.Join(errs...)
}
