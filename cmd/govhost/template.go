package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/policy/policyfile"
)

// newPolicyTemplateCmd holds the policy file templates.
func newPolicyTemplateCmd() *cobra.Command {
	return newGroupCmd("template", "Print policy files built from presets", newTemplateWorkspaceCmd())
}

// newTemplateWorkspaceCmd is `govhost policy template workspace`: it prints
// a policy file that reproduces AgentLane's workspace_tool_policy with the
// same flags.
func newTemplateWorkspaceCmd() *cobra.Command {
	o := policyfile.WorkspaceOptions{}
	var root, id, version, grants, mcpFilesystem, outFile string
	c := &cobra.Command{
		Use:   "workspace --root DIR [--grants G] [--require-approval-for-side-effects] [--require-bash-approval] [--grants-downgrade-side-effect-approval]",
		Short: "Print a policy file reproducing AgentLane's workspace_tool_policy",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if root == "" {
				return usageErrorf("--root is required")
			}
			if cmd.Flags().Changed("grants") {
				o.Grants = &grants
			}
			if mcpFilesystem != "" {
				o.Tools = append(o.Tools, mcp.FilesystemToolIDs(mcpFilesystem)...)
			}
			return workspaceTemplate(cmd, o, root, id, version, outFile)
		},
	}
	f := c.Flags()
	f.StringVar(&root, "root", "", `workspace root, or "$workspace" for the task's own workspace (one policy for every project)`)
	f.StringVar(&id, "id", "", "policy id (default: a new UUID)")
	f.StringVar(&version, "version", "1", "policy version")
	f.StringVar(&grants, "grants", "", "grant string (read,write:create_file,...); the layer is added only when the flag is given")
	f.BoolVar(&o.RequireApprovalForSideEffects, "require-approval-for-side-effects", false, "ask approval for creating, overwriting and modifying files and creating directories")
	f.BoolVar(&o.RequireBashApproval, "require-bash-approval", false, "admit bash (execute_command) and ask approval for it")
	f.StringSliceVar(&o.Tools, "tools", nil, "tool ids the gates bind to (default AgentLane's read, find, grep, write, patch, bash)")
	f.StringVar(&mcpFilesystem, "mcp-filesystem", "", "bind the tools of the reference MCP filesystem server as NAME/TOOL (the NAME given to govhost mcp --name)")
	f.StringVar(&outFile, "out", "", "write the policy file to FILE (its directory is created, mode 0700, like ~/.govhost) instead of stdout")
	f.BoolVar(&o.GrantsDowngradeSideEffectApproval, "grants-downgrade-side-effect-approval", false, "let --grants turn those approvals into allows")
	return c
}

func workspaceTemplate(cmd *cobra.Command, o policyfile.WorkspaceOptions, root, id, version, outFile string) error {
	abs := root
	// "$workspace" is the task's workspace, resolved by the host per task:
	// one policy for every project.
	if !policyfile.IsWorkspaceRef(root) {
		var err error
		if abs, err = filepath.Abs(root); err != nil {
			return usageError(err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	}
	var err error
	o.PolicyID, o.Version, o.Root = uuid.New(), version, abs
	if id != "" {
		if o.PolicyID, err = uuid.Parse(id); err != nil {
			return usageErrorf("--id must be a UUID")
		}
	}
	out, err := policyfile.WorkspaceTemplate(o)
	if err != nil {
		return usageError(err)
	}
	if outFile != "" {
		return writeCreatingDir(outFile, append(out, '\n'))
	}
	fmt.Fprintln(cmd.OutOrStdout(), string(out))
	return nil
}

// writeCreatingDir writes a file a govhost command produced, creating its
// directory (mode 0700: a directory such as ~/.govhost holds tokens and
// policies) so that the command that needs it makes it — a shell redirect
// into a missing ~/.govhost fails before govhost runs.
func writeCreatingDir(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return usageError(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return usageError(err)
	}
	return nil
}
