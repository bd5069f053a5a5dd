package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/gatebench"
	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/host"
)

// newBenchCmd is `govhost bench`: per-call latency, cold load with and
// without the compilation cache and instance memory of one gate or, with
// --compare, of several on the same inputs in one run.
func newBenchCmd() *cobra.Command {
	var gates []string
	var input, config string
	var compare, asJSON bool
	var opts gatebench.Options
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "bench --gate NAME|FILE.wasm [--gate ...] --input FILE [--config JSON|@file] [--compare] [--json]",
		Short: "Time a gate: warm call latency (min / median / p99), cold load with and without the compilation cache, instance memory",
		Long: `Time a gate on the requests of --input: a cases file (JSON or YAML; its inputs and its
file-level config), one GateInput JSON object, or JSON Lines of them. --compare measures
every --gate on the same inputs in one run and prints a Markdown table with each median
call as a ratio of the first gate's. Figures are wall-clock times under whatever else runs
on the machine: compare gates measured in the same run.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(gates) == 0 || input == "" {
				return usageErrorf("--gate and --input are required")
			}
			if compare && len(gates) < 2 {
				return usageErrorf("--compare needs at least two --gate")
			}
			w, err := gatebench.LoadWorkload(input)
			if err != nil {
				return usageError(err)
			}
			if config != "" {
				if w.Config, err = readJSONArg(config); err != nil {
					return usageErrorf("--config: %v", err)
				}
			}
			mods := make([]gatebench.Module, 0, len(gates))
			for _, ref := range gates {
				wasm, builtinGate, err := gatetest.ReadModule(ref)
				if err != nil {
					return usageError(err)
				}
				mods = append(mods, gatebench.Module{Name: ref, Wasm: wasm, Trusted: builtinGate})
			}
			opts.Host = host.NewConfig().WithCallTimeout(timeout)
			res, err := gatebench.Run(cmd.Context(), mods, w, opts)
			if err != nil {
				return invalidError(err)
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				err = gatebench.WriteJSON(out, res)
			case compare:
				if err = gatebench.WriteCompare(out, res); err == nil {
					_, err = fmt.Fprintf(out, "\n%d requests from %s, %d timed calls per gate after %d warm-up calls; cold loads: median of %d.\n",
						len(w.Inputs), input, res[0].Calls, opts.Warmup, opts.ColdRuns)
				}
			default:
				err = gatebench.WriteText(out, res)
			}
			return err
		},
	}
	f := c.Flags()
	f.StringArrayVar(&gates, "gate", nil, "a gate: a .wasm file or a built-in gate's name (repeat with --compare)")
	f.StringVar(&input, "input", "", "the requests: a cases file, a GateInput JSON object, or JSON Lines of them")
	f.StringVar(&config, "config", "", "the gates' configuration (JSON, or @file); default: the cases file's")
	f.BoolVar(&compare, "compare", false, "measure every --gate on the same inputs and print a comparison table")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON (durations in ns)")
	f.IntVar(&opts.Iterations, "iterations", 2000, "timed calls per gate")
	f.IntVar(&opts.Warmup, "warmup", 200, "untimed calls before the timed ones")
	f.IntVar(&opts.ColdRuns, "cold-runs", 3, "cold loads measured per gate (the median is reported)")
	f.DurationVar(&timeout, "timeout", time.Second, "deadline of each guest call")
	return c
}
