package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/internal/demo"
)

// newDemoCmd runs the demo scenario (package internal/demo) on the data
// directory: a workspace policy, a short agent session with a reviewer,
// the chain verified and the task's certificate minted. While govhost serve
// holds the data directory, the session goes through it (/v1: tasks,
// authorize, approvals, complete, certificate); otherwise it runs in
// process on the directory (Pebble evidence and policy stores, the
// built-in Wasm gates, the controller with an approval broker).
func newDemoCmd() *cobra.Command {
	var to target
	c := &cobra.Command{
		Use:   "demo [--data DIR]",
		Short: "Run a governed agent session (through the running server, or in process), verify its chain, mint its certificate",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, out, dataDir := cmd.Context(), cmd.OutOrStdout(), *to.data
			workspace, err := demo.Workspace(dataDir)
			if err != nil {
				return err
			}
			remote, err := to.client(ctx)
			if err != nil {
				return err
			}
			if remote != nil {
				fmt.Fprintln(progress(cmd), "going through the govhost serve that holds", dataDir, "…")
				return demo.Through(ctx, remote, workspace, out)
			}
			fmt.Fprintln(progress(cmd), "opening", dataDir, "and loading the built-in gates…")
			eng, err := openEngine(ctx, dataDir)
			if err != nil {
				return err
			}
			defer eng.Close(ctx)
			return demo.InProcess(ctx, eng, workspace, out)
		},
	}
	to = targetFlags(c)
	return c
}
