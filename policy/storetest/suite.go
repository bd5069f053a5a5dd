package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// T0 is the suite's clock: activation and binding times derive from it.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)

// Run runs every conformance case against stores made by h.New.
func Run(t *testing.T, h Harness) {
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, h) })
	t.Run("GetMissing", func(t *testing.T) { testGetMissing(t, h) })
	t.Run("PutIdempotent", func(t *testing.T) { testPutIdempotent(t, h) })
	t.Run("PutConflict", func(t *testing.T) { testPutConflict(t, h) })
	t.Run("PutInvalid", func(t *testing.T) { testPutInvalid(t, h) })
	t.Run("Activate", func(t *testing.T) { testActivate(t, h) })
	t.Run("ActivateIdempotent", func(t *testing.T) { testActivateIdempotent(t, h) })
	t.Run("ActivateRefused", func(t *testing.T) { testActivateRefused(t, h) })
	t.Run("ActivateNilAvailability", func(t *testing.T) { testActivateNilAvailability(t, h) })
	t.Run("ActivateInvalidInput", func(t *testing.T) { testActivateInvalidInput(t, h) })
	t.Run("BindRules", func(t *testing.T) { testBindRules(t, h) })
	t.Run("BindIdempotentAndConflict", func(t *testing.T) { testBindConflict(t, h) })
	t.Run("ResolvePrecedence", func(t *testing.T) { testResolvePrecedence(t, h) })
	t.Run("ResolveAmbiguous", func(t *testing.T) { testResolveAmbiguous(t, h) })
	t.Run("ResolveNotFound", func(t *testing.T) { testResolveNotFound(t, h) })
	t.Run("History", func(t *testing.T) { testHistory(t, h) })
	t.Run("List", func(t *testing.T) { testList(t, h) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, h) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceled(t, h) })
	if h.RewriteSnapshot != nil {
		t.Run("TamperedSnapshot", func(t *testing.T) { testTampered(t, h) })
	}
}

var ctx = context.Background()

func newStore(t *testing.T, h Harness) policy.Store { return h.New(t, Availability) }

func requireNotFound(t *testing.T, err error) *governance.PolicyNotFoundError {
	t.Helper()
	var nf *governance.PolicyNotFoundError
	require.ErrorAs(t, err, &nf, "%v", err)
	return nf
}

func requireValidation(t *testing.T, err error, field string) {
	t.Helper()
	var ve *governance.ValidationError
	require.ErrorAs(t, err, &ve, "%v", err)
	require.Equal(t, field, ve.Field, "%v", err)
	require.ErrorIs(t, err, governance.ErrInvalid)
}

func activeSnapshot(t *testing.T, s policy.Store, id uuid.UUID, version string) governance.PolicySnapshot {
	t.Helper()
	require.NoError(t, s.Put(ctx, Snapshot(t, id, version, Gate("g", 0))))
	a, err := s.Activate(ctx, id, version, nil, T0)
	require.NoError(t, err)
	return a
}

func testPutGet(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	want := Snapshot(t, id, "1", Gate("b", 2), Gate("a", 1))
	require.NoError(t, s.Put(ctx, want))
	got, err := s.Get(ctx, id, "1")
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, governance.Staged, got.ReleaseState())
	require.Equal(t, "a", got.GateBinding(0).GateID(), "bindings come back in order")
	require.NoError(t, got.Validate())
}

func testGetMissing(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	_, err := s.Get(ctx, id, "1")
	nf := requireNotFound(t, err)
	require.Equal(t, id.String(), nf.PolicyID)
	require.Equal(t, "1", nf.Version)
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "1")))
	_, err = s.Get(ctx, id, "2")
	requireNotFound(t, err)
	_, err = s.Get(ctx, uuid.New(), "1")
	requireNotFound(t, err)
}

func testPutIdempotent(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	snap := Snapshot(t, id, "1", Gate("g", 0))
	require.NoError(t, s.Put(ctx, snap))
	require.NoError(t, s.Put(ctx, snap))
	// The same content built again (bindings listed in another sequence).
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "1", Gate("g", 0))))
	active, err := s.Activate(ctx, id, "1", nil, T0)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, snap), "re-put after activation is a no-op")
	got, err := s.Get(ctx, id, "1")
	require.NoError(t, err)
	require.Equal(t, active, got, "re-put never reverts activation")
}

func testPutConflict(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	first := Snapshot(t, id, "1", Gate("g", 0))
	require.NoError(t, s.Put(ctx, first))
	edited := Gate("g", 0)
	edited.Level = governance.LevelAdvisory
	second := Snapshot(t, id, "1", edited)
	err := s.Put(ctx, second)
	var ce *governance.PolicyConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, id.String(), ce.PolicyID)
	require.Equal(t, "1", ce.Version)
	require.Equal(t, first.Digest(), ce.StoredDigest)
	require.Equal(t, second.Digest(), ce.ProposedDigest)
	got, err := s.Get(ctx, id, "1")
	require.NoError(t, err)
	require.Equal(t, first, got, "the stored version is unchanged")
	// Same id, another version: fine.
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "2", edited)))
}

func testPutInvalid(t *testing.T, h Harness) {
	s := newStore(t, h)
	requireValidation(t, s.Put(ctx, governance.PolicySnapshot{}), "policy_id")
	id := uuid.New()
	active, err := Snapshot(t, id, "1", Gate("g", 0)).Activated(T0, nil)
	require.NoError(t, err)
	requireValidation(t, s.Put(ctx, active), "release_state")
	_, err = s.Get(ctx, id, "1")
	requireNotFound(t, err)
}

func testActivate(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	staged := Snapshot(t, id, "1", Gate("check", 10), Gate("transform", 5))
	require.NoError(t, s.Put(ctx, staged))
	_, err := s.Activate(ctx, id, "2", nil, T0)
	requireNotFound(t, err)

	at := T0.Add(789 * time.Nanosecond).In(time.FixedZone("east", 7200))
	actor := &governance.ActorRef{Kind: "user", ID: "ops"}
	active, err := s.Activate(ctx, id, "1", actor, at)
	require.NoError(t, err)
	require.True(t, active.IsActive())
	require.Equal(t, staged.Digest(), active.Digest(), "activation never changes the digest")
	require.Equal(t, staged.GateBindings(), active.GateBindings())
	require.Equal(t, T0, active.ActivatedAt(), "UTC, truncated to microseconds")
	by, ok := active.ActivatedBy()
	require.True(t, ok)
	require.Equal(t, *actor, by)
	actor.ID = "changed"
	got, err := s.Get(ctx, id, "1")
	require.NoError(t, err)
	require.Equal(t, active, got, "Get returns the active projection")
}

func testActivateIdempotent(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	first := activeSnapshot(t, s, id, "1")
	again, err := s.Activate(ctx, id, "1", &governance.ActorRef{Kind: "user", ID: "late"}, T0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, first, again, "the original activation stands")
}

func testActivateRefused(t *testing.T, h Harness) {
	unavailableAdapter := Gate("b", 1)
	unavailableAdapter.AdapterID = "missing-adapter"
	unavailableModule := Gate("b", 1)
	unavailableModule.ModuleDigest = MissingModule
	noTools := Gate("b", 1)
	noTools.ToolIDs = nil
	dupTools := Gate("b", 1)
	dupTools.ToolIDs = []string{"bash", "bash"}
	cases := []struct {
		name  string
		gates []governance.GateBindingSpec
		field string
	}{
		{"duplicate gate id", []governance.GateBindingSpec{Gate("a", 0), Gate("a", 1)}, "gate_bindings[1].gate_id"},
		{"duplicate order", []governance.GateBindingSpec{Gate("a", 3), Gate("b", 3)}, "gate_bindings[1].order"},
		{"empty tool set", []governance.GateBindingSpec{Gate("a", 0), noTools}, "gate_bindings[1].tool_ids"},
		{"duplicate tool id", []governance.GateBindingSpec{Gate("a", 0), dupTools}, "gate_bindings[1].tool_ids[1]"},
		{"adapter unavailable", []governance.GateBindingSpec{Gate("a", 0), unavailableAdapter}, "gate_bindings[1].adapter_id"},
		{"module unavailable", []governance.GateBindingSpec{Gate("a", 0), unavailableModule}, "gate_bindings[1].module_digest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t, h)
			id := uuid.New()
			require.NoError(t, s.Put(ctx, Snapshot(t, id, "1", c.gates...)))
			_, err := s.Activate(ctx, id, "1", nil, T0)
			var ae *policy.ActivationError
			require.ErrorAs(t, err, &ae, "%v", err)
			require.ErrorIs(t, err, policy.ErrActivation)
			require.Equal(t, c.field, ae.Field, "%v", err)
			require.Equal(t, id.String(), ae.PolicyID)
			got, err := s.Get(ctx, id, "1")
			require.NoError(t, err)
			require.Equal(t, governance.Staged, got.ReleaseState(), "a refused version stays staged")
			err = s.Bind(ctx, Binding(t, governance.ScopeGlobal, "", id, "1"))
			require.ErrorIs(t, err, policy.ErrNotActive)
		})
	}
}

func testActivateNilAvailability(t *testing.T, h Harness) {
	s := h.New(t, nil)
	id := uuid.New()
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "1", Gate("g", 0))))
	_, err := s.Activate(ctx, id, "1", nil, T0)
	require.ErrorIs(t, err, policy.ErrActivation, "no availability check: fail closed")
	// A snapshot without gates needs nothing available (it denies every tool).
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "empty")))
	_, err = s.Activate(ctx, id, "empty", nil, T0)
	require.NoError(t, err)
}

func testActivateInvalidInput(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "1", Gate("g", 0))))
	_, err := s.Activate(ctx, id, "1", nil, time.Time{})
	requireValidation(t, err, "activated_at")
	_, err = s.Activate(ctx, id, "1", &governance.ActorRef{ID: "x"}, T0)
	requireValidation(t, err, "activated_by")
	got, err := s.Get(ctx, id, "1")
	require.NoError(t, err)
	require.False(t, got.IsActive())
}

func testBindRules(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	require.NoError(t, s.Put(ctx, Snapshot(t, id, "staged", Gate("g", 0))))
	activeSnapshot(t, s, id, "1")

	err := s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "staged"))
	var na *policy.NotActiveError
	require.ErrorAs(t, err, &na)
	require.Equal(t, "policy_version", na.Field)
	require.Equal(t, "staged", na.Version)

	requireNotFound(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "nope")))
	requireNotFound(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", uuid.New(), "1")))

	bad := Binding(t, governance.ScopeRole, "dev", id, "1")
	bad.Scope = governance.ScopeGlobal
	requireValidation(t, s.Bind(ctx, bad), "selector")
	bad = Binding(t, governance.ScopeGlobal, "", id, "1")
	bad.Scope = governance.ScopeResource
	requireValidation(t, s.Bind(ctx, bad), "selector")
	requireValidation(t, s.Bind(ctx, governance.PolicyBinding{}), "binding_id")

	// None of the refused bindings routes anything.
	_, err = s.Resolve(ctx, "dev", "")
	requireNotFound(t, err)

	for _, b := range []governance.PolicyBinding{
		Binding(t, governance.ScopeGlobal, "", id, "1"),
		Binding(t, governance.ScopeRole, "dev", id, "1"),
		Binding(t, governance.ScopeResource, "repo/a", id, "1"),
	} {
		require.NoError(t, s.Bind(ctx, b))
	}
}

func testBindConflict(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	activeSnapshot(t, s, id, "1")
	activeSnapshot(t, s, id, "2")
	b := Binding(t, governance.ScopeRole, "dev", id, "1")
	require.NoError(t, s.Bind(ctx, b))
	require.NoError(t, s.Bind(ctx, b), "same binding again is a no-op")
	other := b
	other.PolicyVersion = "2"
	err := s.Bind(ctx, other)
	var bc *policy.BindingConflictError
	require.ErrorAs(t, err, &bc)
	require.ErrorIs(t, err, policy.ErrBindingConflict)
	require.Equal(t, b.BindingID.String(), bc.BindingID)
	got, err := s.Resolve(ctx, "dev", "")
	require.NoError(t, err)
	require.Equal(t, "1", got.Version(), "the conflicting binding was not stored")
}

func testResolvePrecedence(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	global := activeSnapshot(t, s, id, "global")
	role := activeSnapshot(t, s, id, "role")
	resource := activeSnapshot(t, s, id, "resource")
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeGlobal, "", id, "global")))
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "role")))
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeResource, "repo/a", id, "resource")))

	cases := []struct {
		role, resource string
		want           governance.PolicySnapshot
	}{
		{"", "", global},
		{"dev", "", role},
		{"", "repo/a", resource},
		{"dev", "repo/a", resource},
		{"ops", "repo/a", resource},
		{"dev", "repo/b", role},
		{"ops", "repo/b", global},
		{"repo/a", "", global}, // a role label never matches a resource binding
		{"", "dev", global},    // nor a resource label a role binding
	}
	for _, c := range cases {
		got, err := s.Resolve(ctx, c.role, c.resource)
		require.NoError(t, err, "role %q resource %q", c.role, c.resource)
		require.Equal(t, c.want, got, "role %q resource %q", c.role, c.resource)
		require.True(t, got.IsActive())
	}
}

func testResolveAmbiguous(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	activeSnapshot(t, s, id, "1")
	activeSnapshot(t, s, id, "2")
	// Two bindings to the same version are one candidate.
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "1")))
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "1")))
	got, err := s.Resolve(ctx, "dev", "")
	require.NoError(t, err)
	require.Equal(t, "1", got.Version())

	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "2")))
	_, err = s.Resolve(ctx, "dev", "")
	var amb *governance.AmbiguousPolicyError
	require.ErrorAs(t, err, &amb)
	require.Equal(t, "role", amb.Scope)
	require.Equal(t, []string{id.String() + "@1", id.String() + "@2"}, amb.Candidates)

	// Ambiguity at a lower scope does not matter when a higher one decides.
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeResource, "repo/a", id, "2")))
	got, err = s.Resolve(ctx, "dev", "repo/a")
	require.NoError(t, err)
	require.Equal(t, "2", got.Version())

	// Global ambiguity, including across policy ids.
	other := uuid.New()
	activeSnapshot(t, s, other, "1")
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeGlobal, "", id, "1")))
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeGlobal, "", other, "1")))
	_, err = s.Resolve(ctx, "", "")
	require.ErrorAs(t, err, &amb)
	require.Equal(t, "global", amb.Scope)
	require.Len(t, amb.Candidates, 2)
}

func testResolveNotFound(t *testing.T, h Harness) {
	s := newStore(t, h)
	_, err := s.Resolve(ctx, "dev", "repo/a")
	nf := requireNotFound(t, err)
	require.Equal(t, "dev", nf.Role)
	require.Equal(t, "repo/a", nf.Resource)

	id := uuid.New()
	activeSnapshot(t, s, id, "1")
	require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "1")))
	_, err = s.Resolve(ctx, "ops", "")
	requireNotFound(t, err)
	_, err = s.Resolve(ctx, "", "")
	requireNotFound(t, err)
}

func testHistory(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	var want []governance.PolicySnapshot
	for v := 1; v <= 5; v++ {
		version := fmt.Sprintf("2026.%d", v)
		g := Gate("g", v)
		g.Config = fmt.Sprintf(`{"v":%d}`, v)
		snap := Snapshot(t, id, version, g)
		require.NoError(t, s.Put(ctx, snap))
		if v%2 == 1 {
			var err error
			snap, err = s.Activate(ctx, id, version, nil, T0.Add(time.Duration(v)*time.Second))
			require.NoError(t, err)
			require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeResource, version, id, version)))
		}
		want = append(want, snap)
	}
	for _, w := range want {
		got, err := s.Get(ctx, id, w.Version())
		require.NoError(t, err)
		require.Equal(t, w, got)
	}
	// A binding keeps routing to its exact version after newer ones exist.
	got, err := s.Resolve(ctx, "", "2026.1")
	require.NoError(t, err)
	require.Equal(t, want[0], got)
}

func testConcurrent(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uuid.New()
	snap := Snapshot(t, id, "1", Gate("g", 0))
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	actives := make([]governance.PolicySnapshot, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if errs[i] = s.Put(ctx, snap); errs[i] != nil {
				return
			}
			actives[i], errs[i] = s.Activate(ctx, id, "1", &governance.ActorRef{Kind: "worker", ID: fmt.Sprint(i)}, T0.Add(time.Duration(i)*time.Second))
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		require.NoError(t, errs[i])
		require.Equal(t, actives[0], actives[i], "one activation wins, every caller sees it")
	}

	// Conflicting puts of one version: exactly one digest wins.
	id2 := uuid.New()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g := Gate("g", i)
			errs[i] = s.Put(ctx, Snapshot(t, id2, "1", g))
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		var ce *governance.PolicyConflictError
		require.ErrorAs(t, err, &ce)
	}
	require.Equal(t, 1, ok)
}

func testCanceled(t *testing.T, h Harness) {
	s := newStore(t, h)
	c, cancel := context.WithCancel(ctx)
	cancel()
	id := uuid.New()
	require.ErrorIs(t, s.Put(c, Snapshot(t, id, "1")), context.Canceled)
	_, err := s.Get(c, id, "1")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Activate(c, id, "1", nil, T0)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Bind(c, Binding(t, governance.ScopeGlobal, "", id, "1")), context.Canceled)
	_, err = s.Resolve(c, "", "")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Get(ctx, id, "1")
	requireNotFound(t, err)
}

func testTampered(t *testing.T, h Harness) {
	replace := func(old, new string) func(t *testing.T, b []byte) []byte {
		return func(t *testing.T, b []byte) []byte {
			out := strings.Replace(string(b), old, new, 1)
			require.NotEqual(t, string(b), out, "edit did not apply")
			return []byte(out)
		}
	}
	cases := []struct {
		name     string
		edit     func(t *testing.T, b []byte) []byte
		field    string
		activate bool
	}{
		{"level edited", replace(`"level":"hard"`, `"level":"advisory"`), "digest", false},
		{"tool added", replace(`"tool_ids":["bash"`, `"tool_ids":["rm","bash"`), "digest", true},
		{"module swapped", replace(ModuleA, ModuleB), "digest", true},
		{"config edited", replace(`default`, `off`), "digest", false},
		{"transform flipped", replace(`"transform":false`, `"transform":true`), "digest", true},
		{"level made invalid", replace(`"level":"hard"`, `"level":"fatal"`), "gate_bindings[0].level", false},
		{"digest replaced", replace(`"digest":"`, `"digest":"0`), "digest", false},
		{"not JSON", replace(`{`, `[`), "policy_snapshot", false},
		{"another version's record", func(t *testing.T, b []byte) []byte {
			var s governance.PolicySnapshot
			require.NoError(t, s.UnmarshalJSON(b))
			other, err := Snapshot(t, s.PolicyID(), "2", Gate("g", 0)).MarshalJSON()
			require.NoError(t, err)
			return other
		}, "version", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t, h)
			id := uuid.New()
			require.NoError(t, s.Put(ctx, Snapshot(t, id, "1", Gate("g", 0))))
			if c.activate {
				_, err := s.Activate(ctx, id, "1", nil, T0)
				require.NoError(t, err)
				require.NoError(t, s.Bind(ctx, Binding(t, governance.ScopeGlobal, "", id, "1")))
			}
			h.RewriteSnapshot(t, s, id, "1", func(b []byte) []byte { return c.edit(t, b) })
			_, err := s.Get(ctx, id, "1")
			var ie *policy.IntegrityError
			require.ErrorAs(t, err, &ie, "%v", err)
			require.ErrorIs(t, err, policy.ErrIntegrity)
			require.Equal(t, c.field, ie.Field, "%v", err)
			require.Equal(t, id.String(), ie.PolicyID)
			require.Equal(t, "1", ie.Version)
			if c.activate {
				_, err = s.Resolve(ctx, "", "")
				require.ErrorIs(t, err, policy.ErrIntegrity, "never resolved as valid")
			}
			_, err = s.Activate(ctx, id, "1", nil, T0)
			require.ErrorIs(t, err, policy.ErrIntegrity)
			err = s.Put(ctx, Snapshot(t, id, "1", Gate("g", 0)))
			require.ErrorIs(t, err, policy.ErrIntegrity, "a tampered record is not silently repaired")
			err = s.Bind(ctx, Binding(t, governance.ScopeRole, "dev", id, "1"))
			require.ErrorIs(t, err, policy.ErrIntegrity)
		})
	}
}
