package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/govhost/govhost/policy/policyfile"
)

// runTemplate implements `govhost policy template workspace`: it prints a
// policy file that reproduces AgentLane's workspace_tool_policy with the
// same flags.
func runTemplate(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "workspace" {
		fmt.Fprintln(stderr, policyUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("policy template workspace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "workspace root")
	id := fs.String("id", "", "policy id (default: a new UUID)")
	version := fs.String("version", "1", "policy version")
	grants := fs.String("grants", "", "grant string (read,write:create_file,...); the layer is added only when the flag is given")
	sideEffects := fs.Bool("require-approval-for-side-effects", false, "ask approval for creating, overwriting and modifying files and creating directories")
	bash := fs.Bool("require-bash-approval", false, "admit bash (execute_command) and ask approval for it")
	downgrade := fs.Bool("grants-downgrade-side-effect-approval", false, "let --grants turn those approvals into allows")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 || *root == "" {
		fmt.Fprintln(stderr, "govhost policy template workspace: --root is required")
		return exitUsage
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintln(stderr, "govhost policy template:", err)
		return exitUsage
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	pid := uuid.New()
	if *id != "" {
		if pid, err = uuid.Parse(*id); err != nil {
			fmt.Fprintln(stderr, "govhost policy template: --id must be a UUID")
			return exitUsage
		}
	}
	o := policyfile.WorkspaceOptions{
		PolicyID: pid, Version: *version, Root: abs,
		RequireApprovalForSideEffects: *sideEffects, RequireBashApproval: *bash, GrantsDowngradeSideEffectApproval: *downgrade,
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "grants" {
			o.Grants = grants
		}
	})
	out, err := policyfile.WorkspaceTemplate(o)
	if err != nil {
		fmt.Fprintln(stderr, "govhost policy template:", err)
		return exitUsage
	}
	fmt.Fprintln(stdout, string(out))
	return exitOK
}
