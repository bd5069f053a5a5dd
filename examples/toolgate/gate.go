package main

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

// Config is the binding's configuration.
type Config struct {
	DenyTools    []string `json:"deny_tools,omitempty"`
	ApproveTools []string `json:"approve_tools,omitempty"`
	AllowedRoots []string `json:"allowed_roots,omitempty"`
}

// Reason codes of this gate.
const (
	ReasonToolDenied       = "toolgate.tool_denied"
	ReasonPathOutsideRoots = "toolgate.path_outside_roots"
	ReasonApproval         = "toolgate.approval_required"
	ReasonAllowed          = "toolgate.allowed"
)

var reasonCodes = []string{ReasonToolDenied, ReasonPathOutsideRoots, ReasonApproval, ReasonAllowed}

// newGate validates cfg once per instance and returns the gate function.
func newGate(cfg Config) (sdk.Func, error) {
	roots := make([]string, 0, len(cfg.AllowedRoots))
	for _, r := range cfg.AllowedRoots {
		if !strings.HasPrefix(r, "/") {
			return nil, errors.New("toolgate: allowed_roots must be absolute")
		}
		roots = append(roots, filepath.Clean(r))
	}
	return func(in abi.GateInput) abi.GateOutput {
		if slices.Contains(cfg.DenyTools, in.Tool) {
			return sdk.Deny(ReasonToolDenied, "tool "+in.Tool+" is denied by configuration")
		}
		if len(roots) > 0 {
			for _, p := range in.Paths {
				if !underAny(p.Resolved, roots) {
					out := sdk.Deny(ReasonPathOutsideRoots, p.Arg+" resolves outside the allowed roots")
					out.MatchedRule = "allowed_roots"
					return out
				}
			}
		}
		if slices.Contains(cfg.ApproveTools, in.Tool) {
			return sdk.RequireApproval(ReasonApproval, "running "+in.Tool+" needs approval")
		}
		return sdk.Allow(ReasonAllowed)
	}, nil
}

func underAny(path string, roots []string) bool {
	path = filepath.Clean(path)
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+"/") || r == "/" {
			return true
		}
	}
	return false
}
