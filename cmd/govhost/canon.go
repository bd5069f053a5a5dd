package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/govhost/govhost/governance"
)

// maxCanonInput bounds what canon reads from stdin.
const maxCanonInput = 64 << 20

// runCanon prints the canonical JSON of one value read on stdin, then its
// sha256 on a second line.
func runCanon(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: govhost canon < value.json")
		return exitUsage
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxCanonInput+1))
	if err != nil {
		fmt.Fprintln(stderr, "govhost canon:", err)
		return exitUsage
	}
	if len(data) > maxCanonInput {
		fmt.Fprintf(stderr, "govhost canon: input larger than %d bytes\n", maxCanonInput)
		return exitUsage
	}
	v, err := governance.ParseJSON(data)
	if err != nil {
		fmt.Fprintln(stderr, "govhost canon:", err)
		if errors.Is(err, governance.ErrNotCanonical) {
			return exitInvalid // JSON Python reads as a float (NaN, Infinity)
		}
		return exitUsage
	}
	text, digest, err := governance.CanonicalDigest(v)
	if err != nil {
		fmt.Fprintln(stderr, "govhost canon:", err)
		return exitInvalid
	}
	fmt.Fprintf(stdout, "%s\n%s\n", text, digest)
	return exitOK
}
