package main

import "github.com/spf13/cobra"

// commands is every command of govhost, in one place: a top-level command
// is one line here, a group names its subcommands here. Each constructor
// lives in its command's own file and builds the command fresh for every
// run (no state survives between runs). Cobra lists them sorted in --help.
func commands() []*cobra.Command {
	return []*cobra.Command{
		newCanonCmd(),
		newGroupCmd("cert", "Bundle, verify and sign task certificates",
			newCertBundleCmd(), newCertVerifyCmd(), newCertCheckpointCmd(), newCertCosignCmd(),
			newGroupCmd("key", "The data directory's checkpoint signing key", newKeyShowCmd(), newKeyRotateCmd())),
		newGroupCmd("chain", "Export and verify evidence chains",
			newChainVerifyCmd(), newChainExportCmd(), newChainSupersedeCmd()),
		newDemoCmd(),
		newDoctorCmd(),
		newEvalCmd(),
		newBenchCmd(),
		newGroupCmd("gate", "Gate projects: scaffold a new gate", newGateNewCmd()),
		newTestCmd(),
		newGroupCmd("grant", "Excuse one gate's deny in an open task of a running server (operator token)",
			newGrantCmd("exception", false), newGrantCmd("break-glass", true)),
		newHookCmd(),
		newInstallCmd(),
		newMCPCmd(),
		newGroupCmd("plugin", "Check gate modules",
			newPluginCheckCmd(), newPluginAddCmd(), newPluginListCmd()),
		newGroupCmd("policy", "Manage policy versions: put, activate, bind, unbind, list, resolve, show, template",
			newPolicyPutCmd(), newPolicyActivateCmd(), newPolicyBindCmd(), newPolicyUnbindCmd(), newPolicyListCmd(),
			newPolicyResolveCmd(), newPolicyShowCmd(), newPolicyTemplateCmd()),
		newServeCmd(),
		newGroupCmd("witness", "Run a checkpoint witness: cosign govhost checkpoints that extend what it cosigned before (C2SP tlog-witness)",
			newWitnessServeCmd(), newWitnessKeyCmd()),
	}
}
