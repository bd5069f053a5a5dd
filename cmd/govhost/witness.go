package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/checkpoint"
)

// newWitness opens the witness of dir: its key (created as name on first
// use) and its state, cosigning checkpoints of logKeys whose consistency
// certify.Consistency proves.
func newWitness(dir, name string, logKeys []string) (*checkpoint.Witness, error) {
	key, err := checkpoint.OpenWitnessKey(dir, name)
	if err != nil {
		return nil, err
	}
	return checkpoint.NewWitness(dir, key, logKeys, certify.Consistency)
}

func newWitnessServeCmd() *cobra.Command {
	var dir, name, addr string
	var logKeys []string
	c := &cobra.Command{
		Use:   "serve --dir DIR --log-key VKEY... [--name NAME] [--addr HOST:PORT]",
		Short: "Serve POST /add-checkpoint: cosign checkpoints that extend the chain heads cosigned before",
		Long: `serve runs a witness, a process apart from govhost serve with its own key
(DIR/witness.key, created on first start) and its own state (DIR/state.json: per
chain the latest size and head it cosigned). It cosigns a checkpoint signed by one
of the --log-key keys ('govhost cert key show') only when it extends what it
cosigned before, proved by the chain records between the two heads; a rollback
or a fork is refused. The protocol is C2SP tlog-witness's add-checkpoint with the
chain's records as the consistency proof (docs/evidence-format.md). It listens on
loopback by default; it only ever signs what it can verify, so it needs no token.
'govhost cert cosign' submits a bundle's checkpoint to it.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" || len(logKeys) == 0 {
				return usageErrorf("--dir and at least one --log-key are required")
			}
			w, err := newWitness(dir, name, logKeys)
			if err != nil {
				return usageError(err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "govhost witness: listening on http://%s\ngovhost witness: key %s\n", ln.Addr(), w.Key.VerifierKey())
			srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			go func() {
				<-ctx.Done()
				shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = srv.Shutdown(shutdown)
			}()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "the witness's directory (key and state)")
	c.Flags().StringVar(&name, "name", "govhost-witness", "the witness key's name, when it is created")
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:7391", "listen address")
	c.Flags().StringArrayVar(&logKeys, "log-key", nil, "verifier key of a log whose checkpoints it cosigns; repeatable")
	return c
}

func newWitnessKeyCmd() *cobra.Command {
	var dir, name string
	c := &cobra.Command{
		Use:   "key --dir DIR [--name NAME]",
		Short: "Print the witness's verifier key (created on first use), for 'govhost cert verify --witness'",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageErrorf("--dir is required")
			}
			key, err := checkpoint.OpenWitnessKey(dir, name)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), key.VerifierKey())
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "the witness's directory")
	c.Flags().StringVar(&name, "name", "govhost-witness", "the witness key's name, when it is created")
	return c
}

// newCertCosignCmd submits a bundle's checkpoint to a witness and adds the
// cosignature to the bundle.
func newCertCosignCmd() *cobra.Command {
	var url string
	c := &cobra.Command{
		Use:   "cosign BUNDLE --witness-url URL",
		Short: "Have a witness cosign a bundle's checkpoint; the cosignature is added to the bundle",
		Long: `cosign sends the bundle's signed checkpoint to a witness ('govhost witness serve')
with the chain records the witness needs to check that it extends what it cosigned
before, and appends the witness's cosignature line to BUNDLE/checkpoint. A witness
that refuses (a rollback, a fork, an unknown log key) exits 1 with its answer.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if url == "" {
				return usageErrorf("--witness-url is required")
			}
			parts := certify.PartsOf(args[0])
			if parts.Checkpoint == "" {
				return usageErrorf("%s has no checkpoint to cosign", args[0])
			}
			b, err := certify.ReadBundle(parts)
			if err != nil {
				return usageError(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			cosig, err := checkpoint.Submit(ctx, http.DefaultClient, url, b.Checkpoint, func(old int64) ([][]byte, error) {
				return certify.ProofFrom(b.Records, old)
			})
			var we *checkpoint.WitnessError
			switch {
			case errors.As(err, &we):
				return invalidError(err)
			case err != nil:
				return invalidError(err)
			}
			note := append(append([]byte(nil), b.Checkpoint...), cosig...)
			if err := os.WriteFile(parts.Checkpoint, note, 0o644); err != nil {
				return usageError(err)
			}
			_, err = cmd.OutOrStdout().Write(cosig)
			return err
		},
	}
	c.Flags().StringVar(&url, "witness-url", "", "the witness's base URL (http://127.0.0.1:7391)")
	return c
}
