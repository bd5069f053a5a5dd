package service

import (
	"context"
	"errors"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
)

// Codes of module uploads besides the host's own (gate.*, every code in
// govhost.ModuleRefusalCodes, each passed through as the refusal's code).
const (
	CodeModuleEmpty   Code = "module_empty"   // an upload without bytes
	CodeModuleUnknown Code = "module_unknown" // GET of a digest that is not here
	// CodeLoadBusy: every compile slot is taken and the queue is full
	// (host.WithCompileLimits); retry later.
	CodeLoadBusy Code = "load_busy"
	// CodeModuleQuota: the module folder is full (govhost.MaxStoredModules,
	// govhost.MaxStoredModuleBytes).
	CodeModuleQuota Code = "module_quota"
)

// ModuleRefusalCodes are the codes UploadModule refuses a module with
// (the host's reason codes).
func ModuleRefusalCodes() []Code {
	codes := make([]Code, len(govhost.ModuleRefusalCodes))
	for i, c := range govhost.ModuleRefusalCodes {
		codes[i] = Code(c)
	}
	return codes
}

// UploadModule checks wasm as a gate (govhost.Gates.Upload: a full load
// with every limit for modules from outside) and stores it by its sha256.
// A refused module is an *Error whose code is the host's reason code
// (gate.bad_import, gate.reserved_name, ...); nothing is stored then.
// Nothing is ever appended to evidence.
// Module describes a gate module: what a policy binds by sha256.
type Module struct {
	SHA256 string
	// ABIKind is "native" (govhost's gate ABI v1) or "extism" (a module
	// built with an Extism PDK).
	ABIKind string
	// Exports are the module's exported functions and memories, sorted:
	// the module's own text (escape it before showing it on a terminal).
	Exports []string
	Size    int
	// Builtin names the built-in gate these bytes are, if any.
	Builtin string
}

// ModuleUpload is an upload's answer: the module, and whether this upload
// stored it (false: the same bytes were already here).
type ModuleUpload struct {
	Module
	Created bool
}

// StoredModule is one stored module. One stored earlier that the host
// refuses now (its limits were tightened) carries the refusal instead of
// its ABI kind and exports.
type StoredModule struct {
	Module
	Refused *Error
}

func (s *Service) UploadModule(ctx context.Context, wasm []byte) (ModuleUpload, error) {
	info, created, err := s.eng.Gates.Upload(ctx, wasm)
	if err != nil {
		return ModuleUpload{}, moduleError(err)
	}
	return ModuleUpload{Module: ModuleOf(info), Created: created}, nil
}

// Modules lists the stored modules by digest (govhost.Gates.Stored).
func (s *Service) Modules(ctx context.Context) ([]StoredModule, error) {
	stored, err := s.eng.Gates.Stored(ctx)
	if err != nil {
		return nil, err
	}
	return StoredModulesOf(stored), nil
}

// StoredModulesOf describes a listing of stored modules.
func StoredModulesOf(stored []govhost.StoredModule) []StoredModule {
	out := make([]StoredModule, len(stored))
	for i, m := range stored {
		out[i] = StoredModule{Module: ModuleOf(m.ModuleInfo)}
		if m.Refused != nil {
			out[i].Refused = &Error{Code: Code(m.Refused.Code), Message: m.Refused.Error(), Err: m.Refused}
		}
	}
	return out
}

// Module describes one module, stored or built in.
func (s *Service) Module(ctx context.Context, digest string) (Module, error) {
	if !governance.IsDigest(digest) {
		return Module{}, failf(CodeInvalidRequest, "%q is not a sha256 (64 lowercase hex characters)", digest)
	}
	info, err := s.eng.Gates.Module(ctx, digest)
	if errors.Is(err, govhost.ErrModuleUnknown) {
		return Module{}, failf(CodeModuleUnknown, "no stored or built-in module %s", digest)
	}
	if err != nil {
		return Module{}, moduleError(err)
	}
	return ModuleOf(info), nil
}

func moduleError(err error) error {
	var refused *govhost.ModuleRefusedError
	switch {
	case errors.Is(err, govhost.ErrModuleEmpty):
		return fail(CodeModuleEmpty, err)
	case errors.Is(err, govhost.ErrLoadBusy):
		return fail(CodeLoadBusy, err)
	case errors.As(err, new(*govhost.ModuleQuotaError)):
		return fail(CodeModuleQuota, err)
	case errors.As(err, &refused):
		return fail(Code(refused.Code), err)
	}
	return err
}

// ModuleOf describes a module (the API's and `govhost plugin add
// --json`'s).
func ModuleOf(m govhost.ModuleInfo) Module {
	exports := m.Exports
	if exports == nil {
		exports = []string{}
	}
	return Module{SHA256: m.Digest, ABIKind: string(m.Kind), Exports: exports, Size: m.Size, Builtin: m.Builtin}
}

// ReasonCodeDeclared reports whether a gate resolved so far declares code
// (govhost.Gates.ReasonCodeDeclared): the metrics label only those.
func (s *Service) ReasonCodeDeclared(code string) bool { return s.eng.Gates.ReasonCodeDeclared(code) }
