// Package resolve is the resolution precedence every policy store shares:
// resource over role over global, one distinct candidate or an error.
package resolve

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Lookup returns the bindings stored for exactly (scope, selector);
// selector is "" for global.
type Lookup func(ctx context.Context, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error)

// Ref names one policy version.
type Ref struct {
	PolicyID uuid.UUID
	Version  string
}

// Resolve walks resource (if given), role (if given), then global, and
// returns the one distinct version bound at the first scope with any
// binding. Several distinct versions there are an
// *governance.AmbiguousPolicyError; none anywhere a
// *governance.PolicyNotFoundError.
func Resolve(ctx context.Context, role, resource string, lookup Lookup) (Ref, error) {
	levels := [...]struct {
		scope    governance.PolicyScope
		selector string
		given    bool
	}{
		{governance.ScopeResource, resource, resource != ""},
		{governance.ScopeRole, role, role != ""},
		{governance.ScopeGlobal, "", true},
	}
	for _, l := range levels {
		if !l.given {
			continue
		}
		bs, err := lookup(ctx, l.scope, l.selector)
		if err != nil {
			return Ref{}, err
		}
		if len(bs) == 0 {
			continue
		}
		first := Ref{bs[0].PolicyID, bs[0].PolicyVersion}
		distinct := map[Ref]bool{first: true}
		for _, b := range bs[1:] {
			distinct[Ref{b.PolicyID, b.PolicyVersion}] = true
		}
		if len(distinct) == 1 {
			return first, nil
		}
		names := make([]string, 0, len(distinct))
		for r := range distinct {
			names = append(names, r.PolicyID.String()+"@"+r.Version)
		}
		sort.Strings(names)
		return Ref{}, &governance.AmbiguousPolicyError{Scope: string(l.scope), Candidates: names}
	}
	return Ref{}, &governance.PolicyNotFoundError{Role: role, Resource: resource}
}
