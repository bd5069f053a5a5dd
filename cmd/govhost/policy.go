package main

import (
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
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/policy/profiles"
)

func init() {
	register("", func() *cobra.Command {
		return newGroupCmd("policy", "Manage policy versions: put, activate, bind, resolve, show, template",
			newPolicyPutCmd(), newPolicyActivateCmd(), newPolicyBindCmd(), newPolicyResolveCmd(), newPolicyShowCmd(), newPolicyTemplateCmd())
	})
}

// Every policy subcommand prints one JSON object on success and exits 0; a
// refusal by the policy rules (invalid file, conflict, failed activation,
// missing or ambiguous policy) exits 1; bad flags or an unreadable file
// exit 2.

func newPolicyPutCmd() *cobra.Command {
	var file string
	var data *string
	c := &cobra.Command{
		Use:   "put --file policy.json [--data DIR]",
		Short: "Store a policy file's version (staged) and the .wasm modules it references",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErrorf("--file is required")
			}
			out, err := policyPut(cmd.Context(), *data, file)
			return printPolicy(cmd, out, err)
		},
	}
	data = dataFlag(c)
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

// withPolicyStore runs fn on the data directory's policy store.
func withPolicyStore(cmd *cobra.Command, dir string, fn func(policy.Store) (any, error)) error {
	store, _, closeAll, err := openPolicyStore(cmd.Context(), dir)
	if err != nil {
		return err
	}
	defer closeAll()
	out, err := fn(store)
	return printPolicy(cmd, out, err)
}

func newPolicyActivateCmd() *cobra.Command {
	var actor string
	var data *string
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
		return withPolicyStore(cmd, *data, func(store policy.Store) (any, error) {
			snap, err := store.Activate(cmd.Context(), id, version, a, time.Now())
			return summary(snap), err
		})
	}
	data = dataFlag(c)
	c.Flags().StringVar(&actor, "actor", "", "who activates, as kind:id (optional)")
	return c
}

func newPolicyBindCmd() *cobra.Command {
	var scope, selector string
	var data *string
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
		return withPolicyStore(cmd, *data, func(store policy.Store) (any, error) {
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
	data = dataFlag(c)
	c.Flags().StringVar(&scope, "scope", "", "global, role or resource")
	c.Flags().StringVar(&selector, "selector", "", "role or resource label (not for global)")
	return c
}

func newPolicyResolveCmd() *cobra.Command {
	var role, resource string
	var data *string
	c := &cobra.Command{
		Use:   "resolve [--role R] [--resource X] [--data DIR]",
		Short: "Print the version a role / resource resolves to, and its digest",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withPolicyStore(cmd, *data, func(store policy.Store) (any, error) {
				snap, err := store.Resolve(cmd.Context(), role, resource)
				return summary(snap), err
			})
		},
	}
	data = dataFlag(c)
	c.Flags().StringVar(&role, "role", "", "role label (optional)")
	c.Flags().StringVar(&resource, "resource", "", "resource label (optional)")
	return c
}

func newPolicyShowCmd() *cobra.Command {
	var data *string
	var def bool
	var profile string
	c := &cobra.Command{
		Use:   "show (--id ID --version V | --default [--profile P]) [--data DIR]",
		Short: "Print a stored snapshot as JSON, or the default coding-agent policy file",
		Long: `show --id ID --version V prints a stored snapshot. show --default prints the
default coding-agent policy file of a profile (strict, balanced or permissive;
balanced unless --profile) exactly as serve installs it for --data: the file in
policy/profiles/ with the data directory filled in. docs/default-policy.md
explains every rule.`,
	}
	parse := policyVersionFlags(c)
	c.Flags().BoolVar(&def, "default", false, "print the default coding-agent policy file instead of a stored snapshot")
	c.Flags().StringVar(&profile, "profile", "", "with --default: strict, balanced (default) or permissive")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if def {
			if cmd.Flags().Changed("id") || cmd.Flags().Changed("version") {
				return usageErrorf("--default prints the default policy: drop --id and --version")
			}
			b, err := profiles.Render(profile, *data)
			if err != nil {
				return usageError(err)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		}
		if profile != "" {
			return usageErrorf("--profile goes with --default")
		}
		id, version, err := parse()
		if err != nil {
			return err
		}
		return withPolicyStore(cmd, *data, func(store policy.Store) (any, error) {
			return store.Get(cmd.Context(), id, version)
		})
	}
	data = dataFlag(c)
	return c
}

// printPolicy prints a policy command's result, or classifies its error.
func printPolicy(cmd *cobra.Command, out any, err error) error {
	if err != nil {
		var ce *governance.PolicyConflictError
		if errors.As(err, &ce) {
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

func marshalOut(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON() // NB: json.Marshal would re-escape <, > and &
	}
	return json.Marshal(v)
}

// policyPut loads the file, stores its snapshot, then stores its .wasm
// modules in the data directory. Nothing is stored when loading fails or
// the version conflicts.
func policyPut(ctx context.Context, dataDir, file string) (policySummary, error) {
	modules := map[string]string{} // digest → path of every .wasm the file references
	base := policyfile.FileResolver(filepath.Dir(file), builtinBytes)
	resolve := func(ref string) (string, error) {
		digest, err := base(ref)
		if err == nil && policyfile.IsPath(ref) {
			path := ref
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), ref)
			}
			modules[digest] = path
		}
		return digest, err
	}
	snap, err := policyfile.LoadFile(file, resolve)
	if err != nil {
		return policySummary{}, err
	}
	store, gates, closeAll, err := openPolicyStore(ctx, dataDir)
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
