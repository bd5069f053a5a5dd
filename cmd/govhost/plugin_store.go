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
	"github.com/govhost/govhost/server/client"
	"github.com/govhost/govhost/server/wire"
	"github.com/govhost/govhost/service"
)

// newPluginAddCmd is `govhost plugin add FILE.wasm`: the same check and
// content-addressed store as POST /v1/modules (govhost.Gates.Upload). It
// opens only the data directory's module folder, not its stores, so it
// works while a server runs on it (the server reads a module from the
// folder when a policy first names it); while a server runs on it, the
// module goes through it (POST /v1/modules). It exits 0 when the module is stored
// (or already was), 1 when the host refuses it as a gate (nothing is
// stored), 2 on a usage error.
func newPluginAddCmd() *cobra.Command {
	var asJSON bool
	var to target
	c := &cobra.Command{
		Use:   "add [--data DIR] [--json] FILE.wasm",
		Short: "Check a gate module and store it in the data directory by its sha256 (what POST /v1/modules does)",
		Args:  exactArgs("FILE.wasm"),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return usageError(err)
			}
			up, err := addModule(cmd, to, wasm)
			var refused *govhost.ModuleRefusedError
			var remote *client.Error
			if errors.As(err, &refused) || errors.Is(err, govhost.ErrModuleEmpty) || (errors.As(err, &remote) && remote.Status/100 == 4) {
				return invalidError(fmt.Errorf("%s is not stored: %w", args[0], err))
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(up, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			how := "stored"
			if !up.Created {
				how = "already stored"
			}
			printModule(out, up.Module)
			fmt.Fprintf(out, "result:   %s; bind it in a policy file with \"module\": %q\n", how, up.SHA256)
			return nil
		},
	}
	to = targetFlags(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print what POST /v1/modules answers")
	return c
}

// newPluginListCmd is `govhost plugin list`: the stored modules, as GET
// /v1/modules lists them.
func newPluginListCmd() *cobra.Command {
	var asJSON bool
	var to target
	c := &cobra.Command{
		Use:   "list [--data DIR] [--json]",
		Short: "List the gate modules stored in the data directory (what GET /v1/modules lists)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			mods, err := listModules(cmd, to)
			if err != nil {
				return err
			}
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
	to = targetFlags(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print what GET /v1/modules answers")
	return c
}

// addModule checks and stores a module through the server that holds the
// data directory, or in its module folder.
func addModule(cmd *cobra.Command, to target, wasm []byte) (api.ModuleUpload, error) {
	remote, err := to.client(cmd.Context())
	if err != nil {
		return api.ModuleUpload{}, err
	}
	if remote != nil {
		return remote.UploadModule(cmd.Context(), wasm)
	}
	gates, closeGates, err := openModules(cmd, *to.data)
	if err != nil {
		return api.ModuleUpload{}, err
	}
	defer closeGates()
	info, created, err := gates.Upload(cmd.Context(), wasm)
	if err != nil {
		return api.ModuleUpload{}, err
	}
	return wire.ModuleUpload(service.ModuleUpload{Module: service.ModuleOf(info), Created: created}), nil
}

// listModules lists the stored modules through the server that holds the
// data directory, or from its module folder.
func listModules(cmd *cobra.Command, to target) ([]api.StoredModule, error) {
	remote, err := to.client(cmd.Context())
	if err != nil {
		return nil, err
	}
	if remote != nil {
		return remote.Modules(cmd.Context())
	}
	gates, closeGates, err := openModules(cmd, *to.data)
	if err != nil {
		return nil, err
	}
	defer closeGates()
	stored, err := gates.Stored(cmd.Context())
	if err != nil {
		return nil, err
	}
	return wire.StoredModules(service.StoredModulesOf(stored)), nil
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
