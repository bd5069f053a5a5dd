package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// DefaultAdapter is the adapter_id of a gate that names none: the host's
// Wasm adapter, which detects the module's ABI (native or Extism) itself.
const DefaultAdapter = "wasm"

// ErrInvalidFile is matched (errors.Is) by every *FieldError.
var ErrInvalidFile = errors.New("policyfile: invalid policy file")

// ErrModuleNotFound is what a Resolver wraps when a module reference names
// no built-in gate and no readable file.
var ErrModuleNotFound = errors.New("policyfile: module not found")

// FieldError refuses a policy file: Field is the path of the offending
// value in the file ("version", "gates[1].tool_ids[0]"); Err, when set, is
// the cause (a resolver or decoding error).
type FieldError struct {
	File   string
	Field  string
	Reason string
	Err    error
}

func (e *FieldError) Error() string {
	file := e.File
	if file == "" {
		file = "policy file"
	}
	return fmt.Sprintf("policyfile: %s: %s: %s", file, e.Field, e.Reason)
}

func (e *FieldError) Is(target error) bool { return target == ErrInvalidFile }

func (e *FieldError) Unwrap() error { return e.Err }

// Resolver maps a gate's module reference to the lowercase hex sha256 of
// the module's bytes. It returns an error wrapping ErrModuleNotFound when
// the reference names nothing.
type Resolver func(ref string) (digest string, err error)

// IsPath reports whether a module reference is a file path (it contains a
// slash or ends in ".wasm") rather than a built-in gate name.
func IsPath(ref string) bool {
	return strings.ContainsRune(ref, '/') || strings.ContainsRune(ref, filepath.Separator) || strings.HasSuffix(ref, ".wasm")
}

// wasmMagic starts every WebAssembly binary module.
var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// FileResolver resolves path references by reading the file (relative to
// dir unless absolute, see ReadModule) and hashing its bytes; and built-in
// names through builtin, which returns a module's bytes (nil builtin: no
// built-in gates).
func FileResolver(dir string, builtin func(name string) ([]byte, bool)) Resolver {
	return func(ref string) (string, error) {
		if !IsPath(ref) {
			if builtin != nil {
				if b, ok := builtin(ref); ok {
					return governance.SHA256Hex(b), nil
				}
			}
			return "", fmt.Errorf("%w: no built-in gate %q (a file path must contain a slash or end in .wasm)", ErrModuleNotFound, ref)
		}
		b, err := ReadModule(dir, ref)
		if err != nil {
			return "", err
		}
		return governance.SHA256Hex(b), nil
	}
}

// ReadModule reads the module a path reference names (relative to dir
// unless absolute) after checking that it is a WebAssembly binary. A
// missing file wraps ErrModuleNotFound.
func ReadModule(dir, ref string) ([]byte, error) {
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrModuleNotFound, path)
	}
	if err != nil {
		return nil, err
	}
	if len(b) < len(wasmMagic) || string(b[:len(wasmMagic)]) != string(wasmMagic) {
		return nil, fmt.Errorf("%s is not a WebAssembly binary module (no \\0asm header)", path)
	}
	return b, nil
}

// LoadFile reads the policy file at path and returns its staged snapshot.
// resolve maps module references (see FileResolver).
func LoadFile(path string, resolve Resolver) (governance.PolicySnapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	return Load(data, path, resolve)
}

// Load parses a policy file's bytes (name is used in errors) and returns its
// staged snapshot. Every refusal is a *FieldError.
func Load(data []byte, name string, resolve Resolver) (governance.PolicySnapshot, error) {
	l := loader{file: name, resolve: resolve}
	return l.load(data)
}

type loader struct {
	file    string
	resolve Resolver
}

func (l *loader) fail(field, reason string, err error) error {
	return &FieldError{File: l.file, Field: field, Reason: reason, Err: err}
}

var (
	topKeys  = []string{"policy_id", "version", "gates"}
	gateKeys = []string{"gate_id", "module", "adapter_id", "level", "order", "tool_ids", "config", "transform"}
)

// object decodes an object and refuses unknown keys.
func (l *loader) object(raw []byte, field string, known []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		reason := "must be a JSON object"
		if err != nil {
			reason += ": " + err.Error()
		}
		return nil, l.fail(field, reason, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(known, k) {
			return nil, l.fail(join(field, k), fmt.Sprintf("unknown field (known: %s)", strings.Join(known, ", ")), nil)
		}
	}
	return m, nil
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// field decodes m[key] into dst; a missing or null value is an error when
// required, and leaves dst alone otherwise.
func (l *loader) field(m map[string]json.RawMessage, parent, key string, required bool, dst any, want string) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		if required {
			return l.fail(join(parent, key), "is required", nil)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return l.fail(join(parent, key), "must be "+want, err)
	}
	return nil
}

func (l *loader) load(data []byte) (governance.PolicySnapshot, error) {
	top, err := l.object(data, "", topKeys)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) && fe.Field == "" {
			fe.Field = "$"
		}
		return governance.PolicySnapshot{}, err
	}
	var idText, version string
	if err := l.field(top, "", "policy_id", true, &idText, "a UUID string"); err != nil {
		return governance.PolicySnapshot{}, err
	}
	id, err := uuid.Parse(idText)
	if err != nil || id == uuid.Nil || id.String() != strings.ToLower(idText) {
		return governance.PolicySnapshot{}, l.fail("policy_id", fmt.Sprintf("%q is not a UUID in its 36-character form", idText), err)
	}
	if err := l.field(top, "", "version", true, &version, "a string"); err != nil {
		return governance.PolicySnapshot{}, err
	}
	if version == "" {
		return governance.PolicySnapshot{}, l.fail("version", "must not be empty", nil)
	}
	var gates []json.RawMessage
	if err := l.field(top, "", "gates", true, &gates, "a list of gates"); err != nil {
		return governance.PolicySnapshot{}, err
	}
	bindings := make([]governance.ExecutableGateBinding, 0, len(gates))
	gateAt := map[string]int{}
	orderAt := map[int]int{}
	for i, raw := range gates {
		b, err := l.gate(raw, "gates["+strconv.Itoa(i)+"]", i, gateAt, orderAt)
		if err != nil {
			return governance.PolicySnapshot{}, err
		}
		bindings = append(bindings, b)
	}
	snap, err := governance.NewPolicySnapshot(id, version, bindings)
	if err != nil {
		return governance.PolicySnapshot{}, l.wrapGovernance(err, "gate_bindings", "gates")
	}
	return snap, nil
}

func (l *loader) gate(raw []byte, field string, i int, gateAt map[string]int, orderAt map[int]int) (governance.ExecutableGateBinding, error) {
	m, err := l.object(raw, field, gateKeys)
	if err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	var (
		spec   = governance.GateBindingSpec{AdapterID: DefaultAdapter}
		level  string
		order  *int
		module string
	)
	if err := l.field(m, field, "gate_id", true, &spec.GateID, "a string"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if spec.GateID == "" {
		return governance.ExecutableGateBinding{}, l.fail(field+".gate_id", "must not be empty", nil)
	}
	if j, dup := gateAt[spec.GateID]; dup {
		return governance.ExecutableGateBinding{}, l.fail(field+".gate_id", fmt.Sprintf("duplicate gate id %q (also gates[%d])", spec.GateID, j), nil)
	}
	gateAt[spec.GateID] = i
	if err := l.field(m, field, "module", true, &module, "a built-in gate name or a .wasm path"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if module == "" {
		return governance.ExecutableGateBinding{}, l.fail(field+".module", "must not be empty", nil)
	}
	if err := l.field(m, field, "adapter_id", false, &spec.AdapterID, "a string"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if err := l.field(m, field, "level", true, &level, "a string"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	spec.Level = governance.GateLevel(level)
	if !spec.Level.Valid() {
		return governance.ExecutableGateBinding{}, l.fail(field+".level", fmt.Sprintf("unknown level %q (want hard, soft or advisory)", level), nil)
	}
	if err := l.field(m, field, "order", true, &order, "an integer"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if *order < 0 {
		return governance.ExecutableGateBinding{}, l.fail(field+".order", "must be >= 0", nil)
	}
	if j, dup := orderAt[*order]; dup {
		return governance.ExecutableGateBinding{}, l.fail(field+".order", fmt.Sprintf("duplicate order %d (also gates[%d])", *order, j), nil)
	}
	orderAt[*order] = i
	spec.Order = *order
	if err := l.field(m, field, "tool_ids", true, &spec.ToolIDs, "a list of strings"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if len(spec.ToolIDs) == 0 {
		return governance.ExecutableGateBinding{}, l.fail(field+".tool_ids", "must list at least one tool", nil)
	}
	seen := map[string]bool{}
	for j, t := range spec.ToolIDs {
		f := field + ".tool_ids[" + strconv.Itoa(j) + "]"
		if t == "" {
			return governance.ExecutableGateBinding{}, l.fail(f, "must not be empty", nil)
		}
		if seen[t] {
			return governance.ExecutableGateBinding{}, l.fail(f, fmt.Sprintf("duplicate tool id %q", t), nil)
		}
		seen[t] = true
	}
	if err := l.field(m, field, "transform", false, &spec.Transform, "true or false"); err != nil {
		return governance.ExecutableGateBinding{}, err
	}
	if raw, ok := m["config"]; ok {
		text, err := GateConfig(module, raw)
		if err != nil {
			return governance.ExecutableGateBinding{}, l.fail(field+".config", err.Error(), err)
		}
		spec.Config = text
	}
	if l.resolve == nil {
		return governance.ExecutableGateBinding{}, l.fail(field+".module", "no module resolver", ErrModuleNotFound)
	}
	digest, err := l.resolve(module)
	if err != nil {
		return governance.ExecutableGateBinding{}, l.fail(field+".module", err.Error(), err)
	}
	spec.ModuleDigest = digest
	b, err := governance.NewExecutableGateBinding(spec)
	if err != nil {
		return governance.ExecutableGateBinding{}, l.wrapGovernance(err, "", field+".")
	}
	return b, nil
}

// wrapGovernance turns a governance validation error into a FieldError,
// renaming the field from the model's name to the file's.
func (l *loader) wrapGovernance(err error, from, to string) error {
	var ve *governance.ValidationError
	if !errors.As(err, &ve) {
		return l.fail("$", err.Error(), err)
	}
	field := ve.Field
	if from == "" {
		field = to + field
	} else {
		field = strings.Replace(field, from, to, 1)
	}
	return l.fail(field, ve.Reason, err)
}
