package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// BenchFixture is what Populate stored: a version to Get and labels that
// resolve at each scope.
type BenchFixture struct {
	PolicyID uuid.UUID
	Version  string
	Role     string // bound at role scope
	Resource string // bound at resource scope
}

// Populate fills s with 50 policies of 3 active versions of 4 gates each,
// one global binding, 50 role and 200 resource bindings, for benchmarks.
func Populate(b testing.TB, s policy.Store) BenchFixture {
	ctx := context.Background()
	var ids []uuid.UUID
	for p := 0; p < 50; p++ {
		id := uuid.New()
		ids = append(ids, id)
		for v := 0; v < 3; v++ {
			version := fmt.Sprintf("2026.%d", v)
			require.NoError(b, s.Put(ctx, Snapshot(b, id, version, Gate("permission", 10), Gate("pathguard", 20), Gate("destructive", 30), Gate("redact", 40))))
			_, err := s.Activate(ctx, id, version, nil, T0)
			require.NoError(b, err)
		}
	}
	require.NoError(b, s.Bind(ctx, Binding(b, governance.ScopeGlobal, "", ids[0], "2026.0")))
	for i := 0; i < 50; i++ {
		require.NoError(b, s.Bind(ctx, Binding(b, governance.ScopeRole, fmt.Sprintf("role-%d", i), ids[i], "2026.1")))
	}
	for i := 0; i < 200; i++ {
		require.NoError(b, s.Bind(ctx, Binding(b, governance.ScopeResource, fmt.Sprintf("repo/%d", i), ids[i%50], "2026.2")))
	}
	return BenchFixture{PolicyID: ids[7], Version: "2026.1", Role: "role-7", Resource: "repo/7"}
}

// Bench runs the Get and Resolve benchmarks on a populated store.
func Bench(b *testing.B, s policy.Store) {
	f := Populate(b, s)
	ctx := context.Background()
	b.Run("op=get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := s.Get(ctx, f.PolicyID, f.Version); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct{ name, role, resource string }{
		{"scope=resource", f.Role, f.Resource},
		{"scope=role", f.Role, "repo/unbound"},
		{"scope=global", "role-unbound", "repo/unbound"},
	} {
		b.Run("op=resolve/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.Resolve(ctx, c.role, c.resource); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
