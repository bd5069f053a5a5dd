package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
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
	store, closeAll, err := openPolicyStore(cmd.Context(), *to.data)
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

// scopeChange is what bind and unbind name: a policy version and a scope
// (global, or a role or resource label as selector).
type scopeChange struct {
	id              uuid.UUID
	version         string
	scope, selector string
}

// newPolicyScopeCmd is the body bind and unbind share: --id, --version,
// --scope, --selector and the data directory's flags, then remote through
// the server that holds the directory or local on its policy store.
func newPolicyScopeCmd(c *cobra.Command, remote func(context.Context, *client.Client, scopeChange) (any, error), local func(context.Context, policy.Store, scopeChange) (any, error)) *cobra.Command {
	var scope, selector string
	parse := policyVersionFlags(c)
	to := targetFlags(c)
	c.Flags().StringVar(&scope, "scope", "", "global, role or resource")
	c.Flags().StringVar(&selector, "selector", "", "role or resource label (not for global)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		id, version, err := parse()
		if err != nil {
			return err
		}
		change := scopeChange{id: id, version: version, scope: scope, selector: selector}
		ctx := cmd.Context()
		return withPolicies(cmd, to,
			func(c *client.Client) (any, error) { return remote(ctx, c, change) },
			func(store policy.Store) (any, error) { return local(ctx, store, change) })
	}
	return c
}

func newPolicyBindCmd() *cobra.Command {
	return newPolicyScopeCmd(&cobra.Command{
		Use:   "bind --id ID --version V --scope global|role|resource [--selector S] [--data DIR]",
		Short: "Bind an active version to a scope (global, a role or a resource label)",
	}, func(ctx context.Context, c *client.Client, ch scopeChange) (any, error) {
		return c.BindPolicy(ctx, ch.id, ch.version, api.BindRequest{Scope: ch.scope, Selector: ch.selector})
	}, func(ctx context.Context, store policy.Store, ch scopeChange) (any, error) {
		b, err := governance.NewPolicyBinding(governance.PolicyBinding{
			BindingID: uuid.New(), Scope: governance.PolicyScope(ch.scope), Selector: ch.selector,
			PolicyID: ch.id, PolicyVersion: ch.version, CreatedAt: time.Now(),
		})
		if err == nil {
			err = store.Bind(ctx, b)
		}
		return b, err
	})
}

func newPolicyUnbindCmd() *cobra.Command {
	return newPolicyScopeCmd(&cobra.Command{
		Use:   "unbind --id ID --version V --scope global|role|resource [--selector S] [--data DIR]",
		Short: "Remove a version's bindings at one scope (the way out of a binding that should not govern)",
		Long: `unbind removes the bindings of one policy version at one scope (and selector)
and prints how many it removed. The version stays stored and active. With serve
running it goes through the server (POST /v1/policies/{id}/versions/{v}/unbind,
the operator token).`,
	}, func(ctx context.Context, c *client.Client, ch scopeChange) (any, error) {
		return c.UnbindPolicy(ctx, ch.id, ch.version, api.UnbindRequest{Scope: ch.scope, Selector: ch.selector})
	}, func(ctx context.Context, store policy.Store, ch scopeChange) (any, error) {
		u := policy.Unbinding{PolicyID: ch.id, Version: ch.version, Scope: governance.PolicyScope(ch.scope), Selector: ch.selector}
		n, err := store.Unbind(ctx, u)
		return api.Unbound{PolicyID: ch.id.String(), Version: ch.version, Scope: ch.scope, Selector: ch.selector, Removed: n}, err
	})
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

// policyPut stores a policy file and its .wasm modules (govhost's one
// store-a-policy-file operation, govhost.Engine.PutPolicyFile), through the
// server that holds the data directory or on the directory itself. Nothing
// is stored when the file is refused or its version conflicts.
func policyPut(ctx context.Context, to target, file string) (policySummary, error) {
	f, err := govhost.ReadPolicyFile(file)
	if err != nil {
		return policySummary{}, err
	}
	remote, err := to.client(ctx)
	if err != nil {
		return policySummary{}, err
	}
	var out policySummary
	var created bool
	if remote != nil {
		text, err := f.WireText()
		if err != nil {
			return policySummary{}, err
		}
		var sum api.PolicySummary
		if sum, created, err = remote.PutPolicyFile(ctx, f.Snapshot, text, f.Modules); err != nil {
			return policySummary{}, err
		}
		out = summaryOf(sum)
	} else {
		eng, err := openEngine(ctx, *to.data)
		if err != nil {
			return policySummary{}, err
		}
		defer eng.Close(ctx)
		snap, isNew, err := eng.PutPolicyFile(ctx, f)
		if err != nil {
			return policySummary{}, err
		}
		out, created = summary(snap), isNew
	}
	out.Stored = &created
	return out, nil
}

// openPolicyStore opens the data directory's policy store, on the engine
// the other commands use. Activation asks the Wasm host whether each
// module loads: built-ins, and the modules put copied into the directory.
func openPolicyStore(ctx context.Context, dataDir string) (policy.Store, func(), error) {
	eng, err := openEngine(ctx, dataDir)
	if err != nil {
		return nil, nil, err
	}
	return eng.Policies, func() { eng.Close(ctx) }, nil
}
