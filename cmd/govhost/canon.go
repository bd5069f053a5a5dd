package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/governance"
)

func newCanonCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "canon < value.json",
		Short: "Print the canonical JSON (sha256-v1) of JSON read on stdin, and its sha256",
		Long: `canon reads one JSON value on stdin and prints its canonical encoding
(sha256-v1) on one line and its sha256 on a second. Exit 1 for JSON Python
reads as a float (NaN, Infinity) or a value canonical encoding refuses, 2 for
malformed JSON.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCanon(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// maxCanonInput bounds what canon reads from stdin.
const maxCanonInput = 64 << 20

// runCanon prints the canonical JSON of one value read on stdin, then its
// sha256 on a second line.
func runCanon(stdin io.Reader, stdout io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(stdin, maxCanonInput+1))
	if err != nil {
		return usageError(err)
	}
	if len(data) > maxCanonInput {
		return usageErrorf("input larger than %d bytes", maxCanonInput)
	}
	v, err := governance.ParseJSON(data)
	if err != nil {
		if errors.Is(err, governance.ErrNotCanonical) {
			return invalidError(err) // JSON Python reads as a float (NaN, Infinity)
		}
		return usageError(err)
	}
	text, digest, err := governance.CanonicalDigest(v)
	if err != nil {
		return invalidError(err)
	}
	fmt.Fprintf(stdout, "%s\n%s\n", text, digest)
	return nil
}
