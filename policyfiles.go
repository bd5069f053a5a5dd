package govhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
)

// PolicyFile is a policy file parsed and ready to store: its staged
// snapshot and the bytes of every module it names by a path on this
// machine, read once (so what is stored is what was hashed). Parsing
// stores nothing; Engine.PutPolicyFile stores it.
type PolicyFile struct {
	// Snapshot is the file's version, staged.
	Snapshot governance.PolicySnapshot
	// Modules holds, by digest, the bytes of the modules the file names by
	// path. Built-in gates and modules named by digest are not in it.
	Modules map[string][]byte
	// text is the file as written; digests maps each path reference as
	// written to its module's digest (WireText).
	text    []byte
	digests map[string]string
}

// ReadPolicyFile reads and parses the policy file at path on this machine
// (see ParsePolicyFile; its .wasm paths are relative to its folder).
func ReadPolicyFile(path string) (PolicyFile, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return PolicyFile{}, err
	}
	return ParsePolicyFile(text, path, filepath.Dir(path))
}

// ParsePolicyFile parses an operator's policy file (name is used in
// errors): its gates name a built-in gate, or a .wasm file relative to dir
// unless absolute, read and hashed now. Every refusal of the file is a
// policyfile.FieldError (errors.Is policyfile.ErrInvalidFile); a module
// that cannot be found also matches policyfile.ErrModuleNotFound.
func ParsePolicyFile(text []byte, name, dir string) (PolicyFile, error) {
	f := PolicyFile{Modules: map[string][]byte{}, text: text, digests: map[string]string{}}
	resolve := func(ref string) (string, error) {
		if !policyfile.IsPath(ref) {
			return builtinDigest(ref)
		}
		wasm, err := policyfile.ReadModule(dir, ref)
		if err != nil {
			return "", err
		}
		digest := governance.SHA256Hex(wasm)
		f.Modules[digest] = wasm
		f.digests[ref] = digest
		return digest, nil
	}
	snap, err := policyfile.Load(text, name, resolve)
	if err != nil {
		return PolicyFile{}, err
	}
	f.Snapshot = snap
	return f, nil
}

// ParseSentPolicyFile parses a policy file a client sent (over the API;
// name is used in errors): a gate names a built-in gate, or a module
// stored here by its sha256. A path is refused: a file on the server's
// disk is not the client's to name. Errors are those of ParsePolicyFile.
func (g *Gates) ParseSentPolicyFile(text []byte, name string) (PolicyFile, error) {
	resolve := func(ref string) (string, error) {
		if policyfile.IsPath(ref) {
			return "", fmt.Errorf("%w: %q: module paths are not accepted over the API; reference a built-in gate by name or a stored module by its sha256", policyfile.ErrModuleNotFound, ref)
		}
		if governance.IsDigest(ref) && g.ModuleAvailable(ref) {
			return ref, nil
		}
		return builtinDigest(ref)
	}
	snap, err := policyfile.Load(text, name, resolve)
	if err != nil {
		return PolicyFile{}, err
	}
	return PolicyFile{Snapshot: snap, text: text}, nil
}

// builtinDigest resolves a built-in gate's name.
func builtinDigest(name string) (string, error) {
	m, ok := builtin.Lookup(name)
	if !ok {
		return "", fmt.Errorf("%w: no built-in gate and no stored module %q (have %v; a file path must contain a slash or end in .wasm)", policyfile.ErrModuleNotFound, name, builtin.Names())
	}
	return m.Digest, nil
}

// WireText returns the file's text with each .wasm path replaced by its
// module's digest: what a server, which accepts no paths, parses into the
// same snapshot once the modules are uploaded. Numbers in gate
// configurations stay as written.
func (f PolicyFile) WireText() ([]byte, error) {
	if len(f.digests) == 0 {
		return f.text, nil
	}
	dec := json.NewDecoder(bytes.NewReader(f.text))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	gates, _ := doc["gates"].([]any)
	for _, g := range gates {
		if gate, ok := g.(map[string]any); ok {
			if ref, ok := gate["module"].(string); ok && f.digests[ref] != "" {
				gate["module"] = f.digests[ref]
			}
		}
	}
	return json.Marshal(doc)
}

// PutPolicyFile stores a policy file: its version, staged, then the
// modules it names by path in the module folder (content-addressed:
// storing a module changes no policy). It returns the version as stored
// (already active, when it was) and whether it is new; storing the same
// version with the same digest again is not an error. A version stored
// with another digest is a *governance.PolicyConflictError and stores
// nothing. This is the one way every front end stores a policy file: the
// CLI, POST /v1/policies, serve --policy, mcp --policy and the default
// policy of a first start.
func (e *Engine) PutPolicyFile(ctx context.Context, f PolicyFile) (governance.PolicySnapshot, bool, error) {
	id, version := f.Snapshot.PolicyID(), f.Snapshot.Version()
	_, err := e.Policies.Get(ctx, id, version)
	var nf *governance.PolicyNotFoundError
	created := errors.As(err, &nf)
	if err != nil && !created {
		return governance.PolicySnapshot{}, false, err
	}
	if err := e.Policies.Put(ctx, f.Snapshot); err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	for digest, wasm := range f.Modules {
		if _, err := e.Gates.store(digest, wasm); err != nil {
			return governance.PolicySnapshot{}, false, fmt.Errorf("govhost: storing module %s: %w", digest, err)
		}
	}
	stored, err := e.Policies.Get(ctx, id, version)
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	return stored, created, nil
}
