package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
)

func newChainVerifyCmd() *cobra.Command {
	var file, head string
	c := &cobra.Command{
		Use:   "verify --file records.jsonl --expected-head H",
		Short: "Verify a chain exported as JSON Lines against a trusted head",
		Long: `verify reads a chain exported as JSON Lines (govhost chain export), one record a
line in stored order, and checks every record's digests and links up to the
expected head. It prints the VerificationResult as JSON: exit 0 when valid, 1 when
invalid, 2 on unreadable or malformed input.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErrorf("--file is required")
			}
			if !governance.IsDigest(head) {
				return usageErrorf("--expected-head must be 64 lowercase hex characters")
			}
			in := cmd.InOrStdin()
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return usageError(err)
				}
				defer f.Close()
				in = f
			}
			res, err := evidence.VerifyJSONL(in, head)
			if err != nil {
				return usageError(err)
			}
			out, _ := json.Marshal(res)
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			if !res.Valid {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "chain exported as JSON Lines, one record a line in stored order (- for stdin)")
	c.Flags().StringVar(&head, "expected-head", "", "trusted chain hash the chain must end at (64 lowercase hex)")
	return c
}

func newChainExportCmd() *cobra.Command {
	var chain, out string
	var to target
	c := &cobra.Command{
		Use:   "export --chain ID [--data DIR | --addr URL] [--out FILE]",
		Short: "Write a stored chain as JSON Lines, the format chain verify reads",
		Long: `export writes every record of one evidence chain, in stored order, one JSON
record a line. Pipe it to 'govhost chain verify --file -' with the head you trust
(a certificate's evidence_chain_head). An unknown chain is an error (exit 1).
While govhost serve holds the data directory, the export goes through it.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(chain)
			if err != nil {
				return usageErrorf("--chain must be a chain id (UUID)")
			}
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return usageError(err)
				}
				defer f.Close()
				w = f
			}
			remote, err := to.client(cmd.Context())
			if err != nil {
				return err
			}
			if remote != nil {
				var ce *client.Error
				if err := remote.ExportChain(cmd.Context(), id, w); errors.As(err, &ce) && ce.Code == "chain_not_found" {
					return errChainUnknown
				} else if err != nil {
					return err
				}
				return nil
			}
			return exportChain(cmd.Context(), *to.data, id, w)
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&chain, "chain", "", "chain id (UUID), as a certificate's or a task's chain_id")
	c.Flags().StringVar(&out, "out", "", "write to FILE instead of stdout")
	return c
}

// errChainUnknown refuses an export of a chain with no records.
var errChainUnknown = errors.New("no records for this chain id in the data directory")

func exportChain(ctx context.Context, dir string, chain uuid.UUID, w io.Writer) error {
	eng, err := openEngine(ctx, dir)
	if err != nil {
		return err
	}
	defer eng.Close(ctx)
	recs, err := eng.Evidence.Read(ctx, chain, -1)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return errChainUnknown
	}
	return evidence.WriteJSONL(w, recs)
}

// openEngine opens the data directory for a short command. A directory a
// running server holds is refused with a hint.
func openEngine(ctx context.Context, dir string) (*govhost.Engine, error) {
	return openEngineWith(ctx, engineOptions(ctx, dir))
}

// openEngineWith is openEngine with the options given.
func openEngineWith(ctx context.Context, opts govhost.Options) (*govhost.Engine, error) {
	eng, err := govhost.Open(ctx, opts)
	if errors.Is(err, pebblestore.ErrLocked) {
		return nil, usageErrorf("%v: the data directory is held by another process (a running govhost serve?)", err)
	}
	if err != nil {
		return nil, usageError(err)
	}
	return eng, nil
}
