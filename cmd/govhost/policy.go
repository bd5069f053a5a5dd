package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/policyfile"
)

// A data directory (--data, default ./govhost-data) is laid out by package
// govhost: db/ (the Pebble database of the evidence and policy stores),
// modules/<sha256>.wasm (every user module a stored policy references,
// named by its digest, so activation and the host find it) and wasm-cache/.
const defaultDataDir = "./" + govhost.DefaultDir

const policyUsage = `usage: govhost policy <subcommand> [--data DIR] [flags]
  put      --file policy.json                 store the file's version (staged)
  activate --id ID --version V [--actor K:ID] activate a staged version
  bind     --id ID --version V --scope global|role|resource [--selector S]
  resolve  [--role R] [--resource X]          print the pinned version and digest
  show     --id ID --version V                print a stored snapshot as JSON
  template workspace --root DIR [--grants G] [--require-approval-for-side-effects]
           [--require-bash-approval] [--grants-downgrade-side-effect-approval]
                                              print a policy file reproducing AgentLane's
                                              workspace_tool_policy`

// runPolicy implements `govhost policy put|activate|bind|resolve|show`. It
// prints one JSON object on success and exits 0; a refusal by the policy
// rules (invalid file, conflict, failed activation, missing or ambiguous
// policy) exits 1; bad flags or an unreadable file exit 2.
func runPolicy(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, policyUsage)
		return exitUsage
	}
	sub, args := args[0], args[1:]
	if sub == "template" {
		return runTemplate(args, stdout, stderr)
	}
	fs := flag.NewFlagSet("policy "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", defaultDataDir, "data directory")
	var (
		file, id, version, actor, scope, selector, role, resource *string
	)
	switch sub {
	case "put":
		file = fs.String("file", "", "policy file (JSON)")
	case "activate":
		id, version = fs.String("id", "", "policy id"), fs.String("version", "", "policy version")
		actor = fs.String("actor", "", "who activates, as kind:id (optional)")
	case "bind":
		id, version = fs.String("id", "", "policy id"), fs.String("version", "", "policy version")
		scope = fs.String("scope", "", "global, role or resource")
		selector = fs.String("selector", "", "role or resource label (not for global)")
	case "resolve":
		role = fs.String("role", "", "role label (optional)")
		resource = fs.String("resource", "", "resource label (optional)")
	case "show":
		id, version = fs.String("id", "", "policy id"), fs.String("version", "", "policy version")
	default:
		fmt.Fprintf(stderr, "govhost policy: unknown subcommand %q\n%s\n", sub, policyUsage)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "govhost policy %s: %v\n", sub, err)
		return code
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	var policyID uuid.UUID
	if id != nil {
		var err error
		if policyID, err = uuid.Parse(*id); err != nil || *version == "" {
			return fail(exitUsage, errors.New("--id (a UUID) and --version are required"))
		}
	}

	ctx := context.Background()
	var out any
	var err error
	switch sub {
	case "put":
		if *file == "" {
			return fail(exitUsage, errors.New("--file is required"))
		}
		out, err = policyPut(ctx, *data, *file)
	default:
		store, _, closeAll, openErr := openPolicyStore(ctx, *data)
		if openErr != nil {
			return fail(exitUsage, openErr)
		}
		defer closeAll()
		switch sub {
		case "activate":
			var a *governance.ActorRef
			if *actor != "" {
				kind, aid, ok := strings.Cut(*actor, ":")
				if !ok || kind == "" || aid == "" {
					return fail(exitUsage, errors.New("--actor must be kind:id"))
				}
				a = &governance.ActorRef{Kind: kind, ID: aid}
			}
			var snap governance.PolicySnapshot
			if snap, err = store.Activate(ctx, policyID, *version, a, time.Now()); err == nil {
				out = summary(snap)
			}
		case "bind":
			var b governance.PolicyBinding
			b, err = governance.NewPolicyBinding(governance.PolicyBinding{
				BindingID: uuid.New(), Scope: governance.PolicyScope(*scope), Selector: *selector,
				PolicyID: policyID, PolicyVersion: *version, CreatedAt: time.Now(),
			})
			if err == nil {
				err = store.Bind(ctx, b)
			}
			out = b
		case "resolve":
			var snap governance.PolicySnapshot
			if snap, err = store.Resolve(ctx, *role, *resource); err == nil {
				out = summary(snap)
			}
		case "show":
			out, err = store.Get(ctx, policyID, *version)
		}
	}
	if err != nil {
		var ce *governance.PolicyConflictError
		if errors.As(err, &ce) {
			err = fmt.Errorf("%w: a stored version never changes; give the edited policy a new version", err)
		}
		var pe *os.PathError
		if errors.As(err, &pe) && !errors.Is(err, policyfile.ErrInvalidFile) {
			return fail(exitUsage, err)
		}
		return fail(exitInvalid, err)
	}
	text, err := marshalOut(out)
	if err != nil {
		return fail(exitInvalid, err)
	}
	fmt.Fprintln(stdout, string(text))
	return exitOK
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
	// Pebble's informational messages (WAL replay on every open) are noise
	// on a command line; warnings and errors still reach stderr.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dataDir, Logger: quiet, Host: dataHostConfig(dataDir)})
	if err != nil {
		return nil, nil, nil, err
	}
	return eng.Policies, eng.Gates, func() { eng.Close(ctx) }, nil
}
