package service

import (
	"context"
	"errors"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
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
func (s *Service) UploadModule(ctx context.Context, wasm []byte) (api.ModuleUpload, error) {
	info, created, err := s.eng.Gates.Upload(ctx, wasm)
	if err != nil {
		return api.ModuleUpload{}, moduleError(err)
	}
	return api.ModuleUpload{Module: ModuleOf(info), Created: created}, nil
}

// Modules lists the stored modules by digest (govhost.Gates.Stored).
func (s *Service) Modules(ctx context.Context) ([]api.StoredModule, error) {
	stored, err := s.eng.Gates.Stored(ctx)
	if err != nil {
		return nil, err
	}
	return StoredModulesOf(stored), nil
}

// StoredModulesOf is a listing's wire form.
func StoredModulesOf(stored []govhost.StoredModule) []api.StoredModule {
	out := make([]api.StoredModule, len(stored))
	for i, m := range stored {
		out[i] = api.StoredModule{Module: ModuleOf(m.ModuleInfo)}
		if m.Refused != nil {
			out[i].Refused = &api.ErrorDetail{Code: m.Refused.Code, Message: m.Refused.Error()}
		}
	}
	return out
}

// Module describes one module, stored or built in.
func (s *Service) Module(ctx context.Context, digest string) (api.Module, error) {
	if !governance.IsDigest(digest) {
		return api.Module{}, failf(CodeInvalidRequest, "%q is not a sha256 (64 lowercase hex characters)", digest)
	}
	info, err := s.eng.Gates.Module(ctx, digest)
	if errors.Is(err, govhost.ErrModuleUnknown) {
		return api.Module{}, failf(CodeModuleUnknown, "no stored or built-in module %s", digest)
	}
	if err != nil {
		return api.Module{}, moduleError(err)
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
	case errors.As(err, &refused):
		return fail(Code(refused.Code), err)
	}
	return err
}

// ModuleOf is a module's wire form (the API's and `govhost plugin add
// --json`'s).
func ModuleOf(m govhost.ModuleInfo) api.Module {
	exports := m.Exports
	if exports == nil {
		exports = []string{}
	}
	return api.Module{SHA256: m.Digest, ABIKind: string(m.Kind), Exports: exports, Size: m.Size, Builtin: m.Builtin}
}
