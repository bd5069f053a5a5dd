package governance_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

var (
	testPolicyID = uuid.MustParse("6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01")
	digestA      = strings.Repeat("a", 64)
	digestB      = strings.Repeat("b", 64)
)

func spec(gateID string, order int) governance.GateBindingSpec {
	return governance.GateBindingSpec{
		GateID: gateID, AdapterID: "wasm", Level: governance.LevelHard, Order: order,
		ToolIDs: []string{"bash", "write_file"}, ModuleDigest: digestA, Config: `{"mode":"strict"}`,
	}
}

func mustBinding(t testing.TB, s governance.GateBindingSpec) governance.ExecutableGateBinding {
	t.Helper()
	b, err := governance.NewExecutableGateBinding(s)
	require.NoError(t, err)
	return b
}

func mustSnapshot(t testing.TB, version string, specs ...governance.GateBindingSpec) governance.PolicySnapshot {
	t.Helper()
	bs := make([]governance.ExecutableGateBinding, len(specs))
	for i, s := range specs {
		bs[i] = mustBinding(t, s)
	}
	s, err := governance.NewPolicySnapshot(testPolicyID, version, bs)
	require.NoError(t, err)
	return s
}

func requireField(t *testing.T, err error, field string) {
	t.Helper()
	require.Error(t, err)
	var ve *governance.ValidationError
	require.ErrorAs(t, err, &ve, "%v", err)
	require.Equal(t, field, ve.Field, "%v", err)
	require.ErrorIs(t, err, governance.ErrInvalid)
}

func TestExecutableGateBinding_New_Invalid(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*governance.GateBindingSpec)
		field string
	}{
		{"empty gate id", func(s *governance.GateBindingSpec) { s.GateID = "" }, "gate_id"},
		{"empty adapter", func(s *governance.GateBindingSpec) { s.AdapterID = "" }, "adapter_id"},
		{"unknown level", func(s *governance.GateBindingSpec) { s.Level = "fatal" }, "level"},
		{"negative order", func(s *governance.GateBindingSpec) { s.Order = -1 }, "order"},
		{"empty tool id", func(s *governance.GateBindingSpec) { s.ToolIDs = []string{"bash", ""} }, "tool_ids[1]"},
		{"bad module digest", func(s *governance.GateBindingSpec) { s.ModuleDigest = "ABC" }, "module_digest"},
		{"config not JSON", func(s *governance.GateBindingSpec) { s.Config = "{" }, "config"},
		{"config not canonical", func(s *governance.GateBindingSpec) { s.Config = `{"b":1, "a":2}` }, "config"},
		{"config float", func(s *governance.GateBindingSpec) { s.Config = `{"a":1.5}` }, "config"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spec("g", 0)
			c.edit(&s)
			_, err := governance.NewExecutableGateBinding(s)
			requireField(t, err, c.field)
		})
	}
}

func TestExecutableGateBinding_New_Copies(t *testing.T) {
	s := spec("g", 0)
	b := mustBinding(t, s)
	s.ToolIDs[0] = "changed"
	require.Equal(t, []string{"bash", "write_file"}, b.ToolIDs())
	out := b.ToolIDs()
	out[0] = "changed"
	require.Equal(t, []string{"bash", "write_file"}, b.ToolIDs())
	require.True(t, b.AppliesTo("bash"))
	require.False(t, b.AppliesTo("read_file"))

	empty := spec("g", 0)
	empty.Config = ""
	require.Equal(t, "{}", mustBinding(t, empty).Config())
	require.Equal(t, s.ModuleDigest, b.ModuleDigest())
	got := b.Spec()
	got.ToolIDs = []string{"bash", "write_file"}
	require.Equal(t, spec("g", 0), got)
}

func TestPolicySnapshot_New_SortsByOrder(t *testing.T) {
	a := mustSnapshot(t, "1", spec("late", 20), spec("early", 10))
	b := mustSnapshot(t, "1", spec("early", 10), spec("late", 20))
	require.Equal(t, a.Digest(), b.Digest())
	require.Equal(t, "early", a.GateBinding(0).GateID())
	require.Equal(t, "late", a.GateBindings()[1].GateID())
	require.Equal(t, governance.Staged, a.ReleaseState())
	require.NoError(t, a.Validate())
}

func TestPolicySnapshot_New_Invalid(t *testing.T) {
	_, err := governance.NewPolicySnapshot(uuid.Nil, "1", nil)
	requireField(t, err, "policy_id")
	_, err = governance.NewPolicySnapshot(testPolicyID, "", nil)
	requireField(t, err, "version")
	_, err = governance.NewPolicySnapshot(testPolicyID, "1", []governance.ExecutableGateBinding{mustBinding(t, spec("g", 0)), {}})
	requireField(t, err, "gate_bindings[1].gate_id")
	requireField(t, governance.PolicySnapshot{}.Validate(), "policy_id")
}

// Every covered field changes the digest; release state and activation do not.
func TestPolicySnapshot_Digest_Coverage(t *testing.T) {
	base := mustSnapshot(t, "1", spec("g", 0))
	edits := map[string]func(*governance.GateBindingSpec){
		"gate_id":       func(s *governance.GateBindingSpec) { s.GateID = "h" },
		"adapter_id":    func(s *governance.GateBindingSpec) { s.AdapterID = "extism" },
		"level":         func(s *governance.GateBindingSpec) { s.Level = governance.LevelSoft },
		"order":         func(s *governance.GateBindingSpec) { s.Order = 1 },
		"tool_ids":      func(s *governance.GateBindingSpec) { s.ToolIDs = []string{"bash"} },
		"tool order":    func(s *governance.GateBindingSpec) { s.ToolIDs = []string{"write_file", "bash"} },
		"module_digest": func(s *governance.GateBindingSpec) { s.ModuleDigest = digestB },
		"config":        func(s *governance.GateBindingSpec) { s.Config = `{"mode":"lax"}` },
		"transform":     func(s *governance.GateBindingSpec) { s.Transform = true },
	}
	seen := map[string]string{base.Digest(): "base"}
	for name, edit := range edits {
		s := spec("g", 0)
		edit(&s)
		d := mustSnapshot(t, "1", s).Digest()
		prev, dup := seen[d]
		require.False(t, dup, "%s has the digest of %s", name, prev)
		seen[d] = name
	}
	require.NotEqual(t, base.Digest(), mustSnapshot(t, "2", spec("g", 0)).Digest())
	other, err := governance.NewPolicySnapshot(uuid.New(), "1", []governance.ExecutableGateBinding{mustBinding(t, spec("g", 0))})
	require.NoError(t, err)
	require.NotEqual(t, base.Digest(), other.Digest())

	active, err := base.Activated(time.Now(), &governance.ActorRef{Kind: "user", ID: "ops"})
	require.NoError(t, err)
	require.Equal(t, base.Digest(), active.Digest())
	require.True(t, active.IsActive())
	require.NoError(t, active.Validate())
}

// The digest input is the documented map, byte for byte.
func TestPolicySnapshotDigestInput_Golden(t *testing.T) {
	b := mustBinding(t, spec("g", 3))
	text, err := governance.PolicySnapshotDigestInput(testPolicyID, "v1", []governance.ExecutableGateBinding{b})
	require.NoError(t, err)
	want := `{"gate_bindings":[{"adapter_id":"wasm","config":"{\"mode\":\"strict\"}","gate_id":"g","level":"hard",` +
		`"module_digest":"` + digestA + `","order":3,"tool_ids":["bash","write_file"],"transform":false}],` +
		`"policy_id":"6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01","version":"v1"}`
	require.Equal(t, want, string(text))
	d, err := governance.PolicySnapshotDigest(testPolicyID, "v1", []governance.ExecutableGateBinding{b})
	require.NoError(t, err)
	require.Equal(t, governance.SHA256Hex(text), d)
}

func TestPolicySnapshot_Activated(t *testing.T) {
	s := mustSnapshot(t, "1", spec("g", 0))
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	a, err := s.Activated(at, nil)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 2, 4, 5, 123456000, time.UTC), a.ActivatedAt())
	_, ok := a.ActivatedBy()
	require.False(t, ok)
	_, err = a.Activated(at, nil)
	requireField(t, err, "release_state")
	_, err = s.Activated(time.Time{}, nil)
	requireField(t, err, "activated_at")
	_, err = s.Activated(at, &governance.ActorRef{Kind: "user"})
	requireField(t, err, "activated_by")
	require.Equal(t, governance.Staged, s.ReleaseState(), "the staged value is unchanged")
}

func TestPolicySnapshot_JSON_RoundTrip(t *testing.T) {
	staged := mustSnapshot(t, "2026.01", spec("b", 5), spec("a", 1))
	active, err := staged.Activated(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), &governance.ActorRef{Kind: "user", ID: "<ops>"})
	require.NoError(t, err)
	empty := mustSnapshot(t, "empty")
	for _, s := range []governance.PolicySnapshot{staged, active, empty} {
		text, err := json.Marshal(s)
		require.NoError(t, err)
		var back governance.PolicySnapshot
		require.NoError(t, json.Unmarshal(text, &back), "%s", text)
		require.Equal(t, s, back)
		again, err := json.Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(text), string(again))
	}
	text, _ := active.MarshalJSON() // NB: json.Marshal would re-escape '<' as \u003c
	require.Contains(t, string(text), `"activated_at":"2026-01-02T03:04:05.000006Z"`)
	require.Contains(t, string(text), `"<ops>"`, "no HTML escaping")
	text, _ = json.Marshal(staged)
	require.Contains(t, string(text), `"activated_at":null,"activated_by":null`)
}

// A stored snapshot edited after the fact is refused, naming the field.
func TestPolicySnapshot_UnmarshalJSON_Tampered(t *testing.T) {
	s := mustSnapshot(t, "1", spec("g", 0))
	good, err := json.Marshal(s)
	require.NoError(t, err)
	cases := []struct {
		name, old, new, field string
	}{
		{"level edited", `"level":"hard"`, `"level":"advisory"`, "digest"},
		{"tool added", `"tool_ids":["bash"`, `"tool_ids":["rm","bash"`, "digest"},
		{"config edited", `strict`, `lax`, "digest"},
		{"module swapped", digestA, digestB, "digest"},
		{"transform flipped", `"transform":false`, `"transform":true`, "digest"},
		{"unknown level", `"level":"hard"`, `"level":"fatal"`, "gate_bindings[0].level"},
		{"digest malformed", s.Digest(), "xyz", "digest"},
		{"unknown field", `"version":"1"`, `"version":"1","extra":1`, "policy_snapshot"},
		// encoding/json would read these as the genuine keys (case-insensitive,
		// last duplicate wins) where every other reader sees another policy.
		{"case-variant key", `"level":"hard"`, `"Level":"hard"`, "policy_snapshot"},
		{"case-variant duplicate", `"level":"hard"`, `"level":"soft","Level":"hard"`, "policy_snapshot"},
		{"exact duplicate", `"level":"hard"`, `"level":"soft","level":"hard"`, "level"},
		{"missing order", `"order":0,`, ``, "gate_bindings[0].order"},
		{"active without time", `"release_state":"staged"`, `"release_state":"active"`, "activated_at"},
		{"staged with time", `"activated_at":null`, `"activated_at":"2026-01-01T00:00:00.000000Z"`, "activated_at"},
		{"unknown state", `"release_state":"staged"`, `"release_state":"retired"`, "release_state"},
		{"config not canonical", `"config":"{\"mode\":\"strict\"}"`, `"config":"{ \"mode\":\"strict\"}"`, "gate_bindings[0].config"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(string(good), c.old, c.new, 1)
			require.NotEqual(t, string(good), bad, "edit did not apply")
			var back governance.PolicySnapshot
			requireField(t, json.Unmarshal([]byte(bad), &back), c.field)
			require.Equal(t, governance.PolicySnapshot{}, back, "nothing decoded")
		})
	}
}

func TestPolicyBinding_New(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 999, time.UTC)
	base := governance.PolicyBinding{
		BindingID: uuid.New(), Scope: governance.ScopeRole, Selector: "reviewer",
		PolicyID: testPolicyID, PolicyVersion: "1", CreatedAt: now,
	}
	b, err := governance.NewPolicyBinding(base)
	require.NoError(t, err)
	require.Equal(t, now.Truncate(time.Microsecond), b.CreatedAt)

	cases := []struct {
		name  string
		edit  func(*governance.PolicyBinding)
		field string
	}{
		{"global with selector", func(b *governance.PolicyBinding) { b.Scope = governance.ScopeGlobal }, "selector"},
		{"role without selector", func(b *governance.PolicyBinding) { b.Selector = "" }, "selector"},
		{"resource without selector", func(b *governance.PolicyBinding) { b.Scope, b.Selector = governance.ScopeResource, "" }, "selector"},
		{"unknown scope", func(b *governance.PolicyBinding) { b.Scope = "team" }, "scope"},
		{"no binding id", func(b *governance.PolicyBinding) { b.BindingID = uuid.Nil }, "binding_id"},
		{"no policy id", func(b *governance.PolicyBinding) { b.PolicyID = uuid.Nil }, "policy_id"},
		{"no version", func(b *governance.PolicyBinding) { b.PolicyVersion = "" }, "policy_version"},
		{"no time", func(b *governance.PolicyBinding) { b.CreatedAt = time.Time{} }, "created_at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := base
			c.edit(&x)
			_, err := governance.NewPolicyBinding(x)
			requireField(t, err, c.field)
		})
	}
	g := base
	g.Scope, g.Selector = governance.ScopeGlobal, ""
	_, err = governance.NewPolicyBinding(g)
	require.NoError(t, err)
}

func TestPolicyBinding_JSON_RoundTrip(t *testing.T) {
	for _, b := range []governance.PolicyBinding{
		{BindingID: uuid.New(), Scope: governance.ScopeGlobal, PolicyID: testPolicyID, PolicyVersion: "1", CreatedAt: time.Unix(1, 1000).UTC()},
		{BindingID: uuid.New(), Scope: governance.ScopeResource, Selector: "repo/<x>", PolicyID: testPolicyID, PolicyVersion: "2", CreatedAt: time.Unix(2, 0).UTC()},
	} {
		text, err := json.Marshal(b)
		require.NoError(t, err)
		var back governance.PolicyBinding
		require.NoError(t, json.Unmarshal(text, &back), "%s", text)
		require.Equal(t, b, back)
		again, _ := json.Marshal(back)
		require.Equal(t, string(text), string(again))
	}
	var back governance.PolicyBinding
	err := json.Unmarshal([]byte(`{"binding_id":"`+uuid.NewString()+`","scope":"global","policy_id":"`+testPolicyID.String()+`","policy_version":"1","created_at":"2026-01-01T00:00:00.000000Z"}`), &back)
	requireField(t, err, "selector")
	err = json.Unmarshal([]byte(`{"binding_id":"`+uuid.NewString()+`","scope":"role","selector":null,"policy_id":"`+testPolicyID.String()+`","policy_version":"1","created_at":"2026-01-01T00:00:00.000000Z"}`), &back)
	requireField(t, err, "selector")
	require.True(t, errors.Is(err, governance.ErrInvalid))
}

// FuzzPolicySnapshot_UnmarshalJSON: whatever decodes is valid and
// re-encodes to bytes that decode to an equal value and encode the same.
func FuzzPolicySnapshot_UnmarshalJSON(f *testing.F) {
	s := mustSnapshot(f, "1", spec("b", 5), spec("a", 1))
	text, _ := s.MarshalJSON()
	f.Add(text)
	active, _ := s.Activated(time.Unix(1, 0), &governance.ActorRef{Kind: "k", ID: "i"})
	text, _ = active.MarshalJSON()
	f.Add(text)
	f.Fuzz(func(t *testing.T, data []byte) {
		var a governance.PolicySnapshot
		if err := a.UnmarshalJSON(data); err != nil {
			if !errors.Is(err, governance.ErrInvalid) {
				t.Fatalf("not a ValidationError: %T %v", err, err)
			}
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		one, err := a.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var b governance.PolicySnapshot
		if err := b.UnmarshalJSON(one); err != nil {
			t.Fatalf("%v: %s", err, one)
		}
		two, _ := b.MarshalJSON()
		if string(one) != string(two) {
			t.Fatalf("%s != %s", one, two)
		}
	})
}

func TestExecutableGateBinding_AppliesTo_AnyTool(t *testing.T) {
	s := spec("g", 0)
	s.ToolIDs = []string{"bash", governance.AnyTool}
	b := mustBinding(t, s)
	for _, tool := range []string{"bash", "read", "mcp__fs__read_file", "fs/write_file", "SomeNewTool"} {
		require.True(t, b.AppliesTo(tool), tool)
	}
	require.False(t, mustBinding(t, spec("g", 0)).AppliesTo("*x"), "only the exact id * is the wildcard")
}
