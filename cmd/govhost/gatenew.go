package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/scaffold"
)

// newGateNewCmd is `govhost gate new --lang L NAME`: it writes a gate
// project that builds and passes `govhost test` as generated.
func newGateNewCmd() *cobra.Command {
	var lang, dir, src string
	c := &cobra.Command{
		Use:   "new --lang " + strings.Join(scaffold.Languages(), "|") + " NAME",
		Short: "Scaffold a gate project (source, build file, cases file, README) that passes `govhost test` as generated",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if dir == "" {
				dir = name
			}
			if lang == "go" && src == "" {
				cwd, _ := os.Getwd()
				if found, ok := scaffold.FindGovhostSource(cwd); ok {
					src = found
				}
			}
			files, err := scaffold.New(scaffold.Options{Lang: lang, Name: name, Dir: dir, GovhostSrc: src})
			if err != nil {
				return usageError(err)
			}
			out := cmd.OutOrStdout()
			for _, f := range files {
				fmt.Fprintln(out, filepath.Join(dir, f))
			}
			fmt.Fprintf(out, "next: cd %s && make && make test\n", dir)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&lang, "lang", "", "the gate's language: "+strings.Join(scaffold.Languages(), ", "))
	f.StringVar(&dir, "dir", "", "where to write the project (default: ./NAME); must not exist or be empty")
	f.StringVar(&src, "govhost-src", "", "Go only: the govhost source tree to build against (default: the one containing the current directory)")
	return c
}
