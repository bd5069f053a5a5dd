package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/service"
)

func init() {
	register("plugin", newPluginAddCmd)
	register("plugin", newPluginListCmd)
}

// newPluginAddCmd is `govhost plugin add FILE.wasm`: the same check and
// content-addressed store as POST /v1/modules (govhost.Gates.Upload). It
// opens only the data directory's module folder, not its stores, so it
// works while a server runs on it (the server reads a module from the
// folder when a policy first names it). It exits 0 when the module is stored
// (or already was), 1 when the host refuses it as a gate (nothing is
// stored), 2 on a usage error.
func newPluginAddCmd() *cobra.Command {
	var asJSON bool
	var data *string
	c := &cobra.Command{
		Use:   "add [--data DIR] [--json] FILE.wasm",
		Short: "Check a gate module and store it in the data directory by its sha256 (what POST /v1/modules does)",
		Args:  exactArgs("FILE.wasm"),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return usageError(err)
			}
			gates, closeGates, err := openModules(cmd, *data)
			if err != nil {
				return err
			}
			defer closeGates()
			info, created, err := gates.Upload(cmd.Context(), wasm)
			var refused *govhost.ModuleRefusedError
			if errors.As(err, &refused) || errors.Is(err, govhost.ErrModuleEmpty) {
				return invalidError(fmt.Errorf("%s is not stored: %w", args[0], err))
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(api.ModuleUpload{Module: service.ModuleOf(info), Created: created}, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			how := "stored"
			if !created {
				how = "already stored"
			}
			printModule(out, service.ModuleOf(info))
			fmt.Fprintf(out, "result:   %s; bind it in a policy file with \"module\": %q\n", how, info.Digest)
			return nil
		},
	}
	data = dataFlag(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print what POST /v1/modules answers")
	return c
}

// newPluginListCmd is `govhost plugin list`: the stored modules, as GET
// /v1/modules lists them.
func newPluginListCmd() *cobra.Command {
	var asJSON bool
	var data *string
	c := &cobra.Command{
		Use:   "list [--data DIR] [--json]",
		Short: "List the gate modules stored in the data directory (what GET /v1/modules lists)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			gates, closeGates, err := openModules(cmd, *data)
			if err != nil {
				return err
			}
			defer closeGates()
			stored, err := gates.Stored(cmd.Context())
			if err != nil {
				return err
			}
			mods := service.StoredModulesOf(stored)
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(api.ModuleList{Modules: mods}, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			if len(mods) == 0 {
				fmt.Fprintln(out, "no stored modules (built-in gates are named in policies: "+strings.Join(builtin.Names(), ", ")+")")
			}
			for i, m := range mods {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if m.Refused != nil {
					fmt.Fprintf(out, "sha256:   %s\nrefused:  %s: %s\n", m.SHA256, m.Refused.Code, m.Refused.Message)
					continue
				}
				printModule(out, m.Module)
			}
			return nil
		},
	}
	data = dataFlag(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print what GET /v1/modules answers")
	return c
}

// openModules opens the module folder of the data directory dir with the
// host configuration every data-directory command uses (its compilation
// cache), without the stores.
func openModules(cmd *cobra.Command, dir string) (*govhost.Gates, func(), error) {
	h, err := host.New(cmd.Context(), *dataHostConfig(dir))
	if err != nil {
		return nil, nil, err
	}
	gates, err := govhost.NewGates(h, filepath.Join(dir, govhost.ModulesDir))
	if err != nil {
		_ = h.Close(cmd.Context())
		return nil, nil, usageError(err)
	}
	return gates, func() { _ = h.Close(cmd.Context()) }, nil
}

// printModule prints a module's facts; its export names are the guest's
// text, escaped.
func printModule(w io.Writer, m api.Module) {
	exports := make([]string, len(m.Exports))
	for i, e := range m.Exports {
		exports[i] = abi.DisplayText(e)
	}
	fmt.Fprintf(w, "sha256:   %s\n", m.SHA256)
	fmt.Fprintf(w, "abi:      %s\n", m.ABIKind)
	fmt.Fprintf(w, "size:     %d bytes\n", m.Size)
	fmt.Fprintf(w, "exports:  %s\n", strings.Join(exports, ", "))
	if m.Builtin != "" {
		fmt.Fprintf(w, "builtin:  %s\n", m.Builtin)
	}
}
