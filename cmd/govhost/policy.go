package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/policy/profiles"
	"github.com/govhost/govhost/server/client"
)

// Every policy subcommand prints one JSON object on success and exits 0; a
// refusal by the policy rules (invalid file, conflict, failed activation,
// missing or ambiguous policy) exits 1; bad flags or an unreadable file
// exit 2. While govhost serve holds the data directory, every subcommand
// goes through it (/v1/policies); put uploads the file's .wasm modules
// first (POST /v1/modules) and sends the file with their digests.

func newPolicyPutCmd() *cobra.Command {
	var file string
	var to target
	c := &cobra.Command{
		Use:   "put --file policy.json [--data DIR]",
		Short: "Store a policy file's version (staged) and the .wasm modules it references",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErrorf("--file is required")
			}
			out, err := policyPut(cmd.Context(), to, file)
			return printPolicy(cmd, out, err)
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&file, "file", "", "policy file (JSON)")
	return c
}

// policyVersionFlags adds --id and --version; parse returns the id.
func policyVersionFlags(c *cobra.Command) (parse func() (uuid.UUID, string, error)) {
	id := c.Flags().String("id", "", "policy id (UUID)")
	version := c.Flags().String("version", "", "policy version")
	return func() (uuid.UUID, string, error) {
		pid, err := uuid.Parse(*id)
		if err != nil || *version == "" {
			return uuid.Nil, "", usageErrorf("--id (a UUID) and --version are required")
		}
		return pid, *version, nil
	}
}

// withPolicies runs remote through the server that holds the data
// directory, or local on the directory's policy store, and prints the
// result.
func withPolicies(cmd *cobra.Command, to target, remote func(*client.Client) (any, error), local func(policy.Store) (any, error)) error {
	c, err := to.client(cmd.Context())
	if err != nil {
		return err
	}
	if c != nil {
		out, err := remote(c)
		return printPolicy(cmd, out, err)
	}
	store, _, closeAll, err := openPolicyStore(cmd.Context(), *to.data)
	if err != nil {
		return err
	}
	defer closeAll()
	out, err := local(store)
	return printPolicy(cmd, out, err)
}

func newPolicyActivateCmd() *cobra.Command {
	var actor string
	var to target
	c := &cobra.Command{
		Use:   "activate --id ID --version V [--actor KIND:ID] [--data DIR]",
		Short: "Activate a staged version (its gate modules must load)",
	}
	parse := policyVersionFlags(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		id, version, err := parse()
		if err != nil {
			return err
		}
		var a *governance.ActorRef
		if actor != "" {
			kind, aid, ok := strings.Cut(actor, ":")
			if !ok || kind == "" || aid == "" {
				return usageErrorf("--actor must be kind:id")
			}
			a = &governance.ActorRef{Kind: kind, ID: aid}
		}
		return withPolicies(cmd, to, func(c *client.Client) (any, error) {
			sum, err := c.ActivatePolicy(cmd.Context(), id, version, a)
			return summaryOf(sum), err
		}, func(store policy.Store) (any, error) {
			snap, err := store.Activate(cmd.Context(), id, version, a, time.Now())
			return summary(snap), err
		})
	}
	to = targetFlags(c)
	c.Flags().StringVar(&actor, "actor", "", "who activates, as kind:id (optional)")
	return c
}

func newPolicyBindCmd() *cobra.Command {
	var scope, selector string
	var to target
	c := &cobra.Command{
		Use:   "bind --id ID --version V --scope global|role|resource [--selector S] [--data DIR]",
		Short: "Bind an active version to a scope (global, a role or a resource label)",
	}
	parse := policyVersionFlags(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		id, version, err := parse()
		if err != nil {
			return err
		}
		return withPolicies(cmd, to, func(c *client.Client) (any, error) {
			return c.BindPolicy(cmd.Context(), id, version, api.BindRequest{Scope: scope, Selector: selector})
		}, func(store policy.Store) (any, error) {
			b, err := governance.NewPolicyBinding(governance.PolicyBinding{
				BindingID: uuid.New(), Scope: governance.PolicyScope(scope), Selector: selector,
				PolicyID: id, PolicyVersion: version, CreatedAt: time.Now(),
			})
			if err == nil {
				err = store.Bind(cmd.Context(), b)
			}
			return b, err
		})
	}
	to = targetFlags(c)
	c.Flags().StringVar(&scope, "scope", "", "global, role or resource")
	c.Flags().StringVar(&selector, "selector", "", "role or resource label (not for global)")
	return c
}

func newPolicyUnbindCmd() *cobra.Command {
	var scope, selector string
	var to target
	c := &cobra.Command{
		Use:   "unbind --id ID --version V --scope global|role|resource [--selector S] [--data DIR]",
		Short: "Remove a version's bindings at one scope (the way out of a binding that should not govern)",
		Long: `unbind removes the bindings of one policy version at one scope (and selector)
and prints how many it removed. The version stays stored and active. With serve
running it goes through the server (POST /v1/policies/{id}/versions/{v}/unbind,
the operator token).`,
	}
	parse := policyVersionFlags(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		id, version, err := parse()
		if err != nil {
			return err
		}
		return withPolicies(cmd, to, func(c *client.Client) (any, error) {
			return c.UnbindPolicy(cmd.Context(), id, version, api.UnbindRequest{Scope: scope, Selector: selector})
		}, func(store policy.Store) (any, error) {
			u := policy.Unbinding{PolicyID: id, Version: version, Scope: governance.PolicyScope(scope), Selector: selector}
			n, err := store.Unbind(cmd.Context(), u)
			return api.Unbound{PolicyID: id.String(), Version: version, Scope: scope, Selector: selector, Removed: n}, err
		})
	}
	to = targetFlags(c)
	c.Flags().StringVar(&scope, "scope", "", "global, role or resource")
	c.Flags().StringVar(&selector, "selector", "", "role or resource label (not for global)")
	return c
}

func newPolicyResolveCmd() *cobra.Command {
	var role, resource string
	var to target
	c := &cobra.Command{
		Use:   "resolve [--role R] [--resource X] [--data DIR]",
		Short: "Print the version a role / resource resolves to, and its digest",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withPolicies(cmd, to, func(c *client.Client) (any, error) {
				sum, err := c.ResolvePolicy(cmd.Context(), role, resource)
				return summaryOf(sum), err
			}, func(store policy.Store) (any, error) {
				snap, err := store.Resolve(cmd.Context(), role, resource)
				return summary(snap), err
			})
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&role, "role", "", "role label (optional)")
	c.Flags().StringVar(&resource, "resource", "", "resource label (optional)")
	return c
}

func newPolicyShowCmd() *cobra.Command {
	var to target
	var id, version, profile string
	var def bool
	c := &cobra.Command{
		Use:   "show (--id ID [--version V] | --default [--profile P]) [--data DIR]",
		Short: "Print a stored snapshot as JSON (without --version: the policy's stored versions), or the default coding-agent policy file",
		Long: `show --id ID --version V prints a stored snapshot; without --version, the
policy's stored versions. show --default prints the default coding-agent policy
file of a profile (strict, balanced or permissive; balanced unless --profile)
exactly as serve installs it for --data: the file in policy/profiles/ with the
data directory filled in. docs/default-policy.md explains every rule.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if def {
				if id != "" || version != "" {
					return usageErrorf("--default prints the default policy: drop --id and --version")
				}
				b, err := profiles.Render(profile, *to.data)
				if err != nil {
					return usageError(err)
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			if profile != "" {
				return usageErrorf("--profile goes with --default")
			}
			pid, err := uuid.Parse(id)
			if err != nil {
				return usageErrorf("--id (a UUID) is required")
			}
			if version == "" {
				return withPolicies(cmd, to, func(c *client.Client) (any, error) {
					list, err := c.PolicyVersions(cmd.Context(), pid)
					return listOf(list), err
				}, func(store policy.Store) (any, error) {
					return listPolicies(cmd.Context(), store, pid)
				})
			}
			return withPolicies(cmd, to, func(c *client.Client) (any, error) {
				return c.ShowPolicy(cmd.Context(), pid, version)
			}, func(store policy.Store) (any, error) {
				return store.Get(cmd.Context(), pid, version)
			})
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&id, "id", "", "policy id (UUID)")
	c.Flags().StringVar(&version, "version", "", "policy version (omitted: list the policy's versions)")
	c.Flags().BoolVar(&def, "default", false, "print the default coding-agent policy file instead of a stored snapshot")
	c.Flags().StringVar(&profile, "profile", "", "with --default: strict, balanced (default) or permissive")
	return c
}

func newPolicyListCmd() *cobra.Command {
	var to target
	c := &cobra.Command{
		Use:   "list [--data DIR]",
		Short: "Print every stored policy version, staged and active, as JSON",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withPolicies(cmd, to, func(c *client.Client) (any, error) {
				list, err := c.Policies(cmd.Context())
				return listOf(list), err
			}, func(store policy.Store) (any, error) {
				return listPolicies(cmd.Context(), store, uuid.Nil)
			})
		},
	}
	to = targetFlags(c)
	return c
}

// policyList is what list (and show without --version) prints.
type policyList struct {
	Policies []policySummary `json:"policies"`
}

func listOf(list []api.PolicySummary) policyList {
	out := policyList{Policies: make([]policySummary, len(list))}
	for i, p := range list {
		out.Policies[i] = summaryOf(p)
	}
	return out
}

// listPolicies lists a store's versions (of one policy unless id is
// uuid.Nil) as the server does.
func listPolicies(ctx context.Context, store policy.Store, id uuid.UUID) (policyList, error) {
	lister, ok := store.(policy.Lister)
	if !ok {
		return policyList{}, fmt.Errorf("the policy store (%T) cannot list its versions", store)
	}
	snaps, err := lister.List(ctx)
	if err != nil {
		return policyList{}, err
	}
	out := policyList{Policies: []policySummary{}}
	for _, snap := range snaps {
		if id == uuid.Nil || snap.PolicyID() == id {
			out.Policies = append(out.Policies, summary(snap))
		}
	}
	if id != uuid.Nil && len(out.Policies) == 0 {
		return policyList{}, &governance.PolicyNotFoundError{PolicyID: id.String()}
	}
	return out, nil
}

// printPolicy prints a policy command's result, or classifies its error.
func printPolicy(cmd *cobra.Command, out any, err error) error {
	if err != nil {
		var ce *governance.PolicyConflictError
		var remote *client.Error
		if errors.As(err, &ce) || (errors.As(err, &remote) && remote.Code == "policy_conflict") {
			err = fmt.Errorf("%w: a stored version never changes; give the edited policy a new version", err)
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		var pe *os.PathError
		if errors.As(err, &pe) && !errors.Is(err, policyfile.ErrInvalidFile) {
			return usageError(err)
		}
		return invalidError(err)
	}
	text, err := marshalOut(out)
	if err != nil {
		return invalidError(err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), string(text))
	return nil
}

// policySummary is what put, activate and resolve print.
type policySummary struct {
	PolicyID     string `json:"policy_id"`
	Version      string `json:"version"`
	Digest       string `json:"digest"`
	ReleaseState string `json:"release_state"`
	Stored       *bool  `json:"stored,omitempty"` // put: false when the same version and digest were already there
}

func summary(s governance.PolicySnapshot) policySummary {
	return policySummary{PolicyID: s.PolicyID().String(), Version: s.Version(), Digest: s.Digest(), ReleaseState: string(s.ReleaseState())}
}

// summaryOf is the same summary of a server's answer.
func summaryOf(s api.PolicySummary) policySummary {
	return policySummary{PolicyID: s.PolicyID.String(), Version: s.Version, Digest: s.Digest, ReleaseState: s.ReleaseState}
}

func marshalOut(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON() // NB: json.Marshal would re-escape <, > and &
	}
	return json.Marshal(v)
}

// policyPut loads the file, stores its snapshot, then stores its .wasm
// modules in the data directory. Nothing is stored when loading fails or
// the version conflicts. Through a server, the modules are uploaded first
// (a module store is content-addressed: an upload changes no policy) and
// the file is sent with their digests in place of their paths.
func policyPut(ctx context.Context, to target, file string) (policySummary, error) {
	modules := map[string]string{} // digest → path of every .wasm the file references
	digests := map[string]string{} // path reference as written → digest
	base := policyfile.FileResolver(filepath.Dir(file), builtinBytes)
	resolve := func(ref string) (string, error) {
		digest, err := base(ref)
		if err == nil && policyfile.IsPath(ref) {
			path := ref
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), ref)
			}
			modules[digest] = path
			digests[ref] = digest
		}
		return digest, err
	}
	snap, err := policyfile.LoadFile(file, resolve)
	if err != nil {
		return policySummary{}, err
	}
	remote, err := to.client(ctx)
	if err != nil {
		return policySummary{}, err
	}
	if remote != nil {
		return policyPutRemote(ctx, remote, file, snap, modules, digests)
	}
	store, gates, closeAll, err := openPolicyStore(ctx, *to.data)
	if err != nil {
		return policySummary{}, err
	}
	defer closeAll()
	_, getErr := store.Get(ctx, snap.PolicyID(), snap.Version())
	existed := getErr == nil
	if err := store.Put(ctx, snap); err != nil {
		return policySummary{}, err
	}
	for digest, path := range modules {
		b, err := os.ReadFile(path)
		if err != nil {
			return policySummary{}, err
		}
		if got, err := gates.Add(b); err != nil {
			return policySummary{}, err
		} else if got != digest {
			return policySummary{}, fmt.Errorf("module %s changed while being stored", path)
		}
	}
	stored, err := store.Get(ctx, snap.PolicyID(), snap.Version())
	if err != nil {
		return policySummary{}, err
	}
	out := summary(stored)
	isNew := !existed
	out.Stored = &isNew
	return out, nil
}

// policyPutRemote is policyPut through a server: upload the modules, send
// the file with each module path replaced by its digest.
func policyPutRemote(ctx context.Context, c *client.Client, file string, snap governance.PolicySnapshot, modules, digests map[string]string) (policySummary, error) {
	for digest, path := range modules {
		b, err := os.ReadFile(path)
		if err != nil {
			return policySummary{}, err
		}
		up, err := c.UploadModule(ctx, b)
		if err != nil {
			return policySummary{}, fmt.Errorf("module %s: %w", path, err)
		}
		if up.SHA256 != digest {
			return policySummary{}, fmt.Errorf("module %s changed while being stored", path)
		}
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return policySummary{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber() // NB: numbers in gate configs stay as written
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return policySummary{}, err
	}
	gates, _ := doc["gates"].([]any)
	for _, g := range gates {
		if gate, ok := g.(map[string]any); ok {
			if ref, ok := gate["module"].(string); ok && digests[ref] != "" {
				gate["module"] = digests[ref]
			}
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return policySummary{}, err
	}
	var ce *client.Error
	_, getErr := c.ShowPolicy(ctx, snap.PolicyID(), snap.Version())
	existed := getErr == nil
	if getErr != nil && !(errors.As(getErr, &ce) && ce.Code == "policy_not_found") {
		return policySummary{}, getErr
	}
	sum, err := c.PutPolicy(ctx, body)
	if err != nil {
		return policySummary{}, err
	}
	if sum.Digest != snap.Digest() {
		return policySummary{}, fmt.Errorf("the server stored %s@%s with digest %s, this file has %s", sum.PolicyID, sum.Version, sum.Digest, snap.Digest())
	}
	out := summaryOf(sum)
	isNew := !existed
	out.Stored = &isNew
	return out, nil
}

// builtinBytes resolves a built-in gate name to its embedded module.
func builtinBytes(name string) ([]byte, bool) {
	m, ok := builtin.Lookup(name)
	return m.Wasm, ok
}

// openPolicyStore opens the data directory's policy store, on the engine
// the other commands use. Activation asks the Wasm host whether each
// module loads: built-ins, and the modules put copied into the directory.
func openPolicyStore(ctx context.Context, dataDir string) (policy.Store, *govhost.Gates, func(), error) {
	eng, err := openEngine(ctx, dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	return eng.Policies, eng.Gates, func() { eng.Close(ctx) }, nil
}
