package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/checkpoint"
)

func newCertBundleCmd() *cobra.Command {
	var task, out, log string
	var to target
	c := &cobra.Command{
		Use:   "bundle --task ID --out DIR [--checkpoint-log PATH]",
		Short: "Mint a closed task's certificate and write it with its proof into a bundle folder",
		Long: `bundle mints the certificate of a closed task at its chain's head and writes a
bundle folder: certificate.json, chain.jsonl, policy.json and checkpoint (the head
signed with the data directory's key). 'govhost cert verify DIR' checks it without
the data directory. --checkpoint-log also appends the checkpoint to the operator's
log outside the data directory: a file, or a directory of one file per checkpoint
(an existing directory, or a path ending in '/', created if needed).
A task that cannot be certified exits 1 with the rule it fails. While govhost serve
holds the data directory, the bundle comes from it (GET /v1/tasks/{id}/bundle).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(task)
			if err != nil {
				return usageErrorf("--task must be a task boundary id (UUID)")
			}
			if out == "" {
				return usageErrorf("--out is required")
			}
			b, err := taskBundle(cmd, to, id)
			if err != nil {
				return err
			}
			// The log first: a log that cannot be written leaves no bundle
			// that the operator's log does not know.
			if log != "" {
				if err := checkpoint.Append(log, b.Checkpoint); err != nil {
					return usageError(err)
				}
			}
			if err := certify.WriteBundle(out, b); err != nil {
				return usageError(err)
			}
			text, _ := b.Certificate.MarshalJSON()
			fmt.Fprintln(cmd.OutOrStdout(), string(text))
			return nil
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&task, "task", "", "task boundary id (UUID) of a closed task")
	c.Flags().StringVar(&out, "out", "", "bundle folder to write")
	c.Flags().StringVar(&log, "checkpoint-log", "", "also append the checkpoint to this file or directory")
	return c
}

// taskBundle mints a closed task's bundle, with its signed checkpoint,
// through the server that holds the data directory or on the directory.
func taskBundle(cmd *cobra.Command, to target, task uuid.UUID) (certify.Bundle, error) {
	remote, err := to.client(cmd.Context())
	if err != nil {
		return certify.Bundle{}, err
	}
	if remote != nil {
		b, err := remote.Bundle(cmd.Context(), task, true)
		if err != nil {
			return certify.Bundle{}, err
		}
		return certify.Bundle{Certificate: b.Certificate, Records: b.Chain, Policy: b.Policy, Checkpoint: []byte(b.Checkpoint)}, nil
	}
	eng, err := openEngine(cmd.Context(), *to.data)
	if err != nil {
		return certify.Bundle{}, err
	}
	defer eng.Close(cmd.Context())
	return eng.Bundle(cmd.Context(), task)
}

func newCertVerifyCmd() *cobra.Command {
	var parts certify.Parts
	var keys, witnesses []string
	var minCosigs int
	var logs []string
	c := &cobra.Command{
		Use:   "verify (BUNDLE | --cert F --chain F --policy F [--checkpoint F]) [--key VKEY]... [--witness WKEY]... [--witnesses N] [--checkpoints LOG]...",
		Short: "Verify a certificate bundle offline, printing which rule fails",
		Long: `verify re-derives everything a certificate claims from the bundle alone: the chain
against the certificate's head, the policy digest recomputed, TASK_CLOSED at the
head, one terminal per operation, every applicable gate recorded before a callable,
no callable after a deny, the gate summary recounted and the grade. With --key (a
verifier key, as 'govhost cert key show' prints; repeatable) the bundle's
checkpoint must be signed by one of them; without, the report says the bundle is
unauthenticated. --checkpoints (a checkpoint log file or directory; repeatable)
adds later checkpoints of the chain, which catch a chain truncated or rolled back.
--witness (a witness verifier key, 'govhost witness key'; repeatable) counts the
witnesses that cosigned the checkpoint ('govhost cert cosign'); --witnesses N
requires N of them (default 1 when a --witness is given).
It prints a JSON report: exit 0 valid, 1 invalid (rule, failure_code, reason), 2
an unreadable or malformed bundle (with the file, line and field): a file over its
size limit, JSON that is not exactly the format (unknown or repeated keys at any
depth), a checkpoint or log note that is not a C2SP signed note, a bad --key.
The report's checkpoint fields say what the bundle's checkpoint is even when an
earlier rule failed. The format and every rule: docs/evidence-format.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if parts != (certify.Parts{}) {
					return usageErrorf("give a bundle folder or --cert/--chain/--policy/--checkpoint, not both")
				}
				if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
					return usageErrorf("%s is not a bundle folder", args[0])
				}
				parts = certify.PartsOf(args[0])
			}
			if len(args) == 0 && (parts.Certificate == "" || parts.Chain == "" || parts.Policy == "") {
				return usageErrorf("give a bundle folder, or --cert, --chain and --policy (a certificate cannot be checked without the policy it pins)")
			}
			for _, k := range keys {
				if strings.HasPrefix(k, "@") {
					return usageErrorf("--key takes the verifier key text, not a file")
				}
				if err := checkpoint.CheckVerifierKey(k); err != nil {
					return usageError(err)
				}
			}
			for _, k := range witnesses {
				if err := checkpoint.CheckWitnessKey(k); err != nil {
					return usageError(err)
				}
			}
			if !cmd.Flags().Changed("witnesses") && len(witnesses) > 0 {
				minCosigs = 1
			}
			if minCosigs < 0 || minCosigs > len(witnesses) {
				return usageErrorf("--witnesses %d needs at least that many --witness keys", minCosigs)
			}
			b, err := certify.ReadBundle(parts)
			if err != nil {
				return usageError(err)
			}
			var later [][]byte
			for _, l := range logs {
				notes, err := checkpoint.ReadLog(l)
				if err != nil {
					return usageError(err)
				}
				later = append(later, notes...)
			}
			rep := certify.Verify(b, certify.VerifyOptions{Keys: keys, Later: later, Witnesses: witnesses, MinCosignatures: minCosigs})
			text, _ := json.Marshal(rep)
			fmt.Fprintln(cmd.OutOrStdout(), string(text))
			if !rep.Valid {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	c.Flags().StringVar(&parts.Certificate, "cert", "", "certificate JSON")
	c.Flags().StringVar(&parts.Chain, "chain", "", "chain as JSON Lines")
	c.Flags().StringVar(&parts.Policy, "policy", "", "policy snapshot JSON (govhost policy show)")
	c.Flags().StringVar(&parts.Checkpoint, "checkpoint", "", "signed checkpoint of the certificate's head")
	c.Flags().StringArrayVar(&keys, "key", nil, "trusted verifier key (name+hash+base64); repeatable")
	c.Flags().StringArrayVar(&witnesses, "witness", nil, "witness verifier key (name+hash+base64) whose cosignature counts; repeatable")
	c.Flags().IntVar(&minCosigs, "witnesses", 0, "cosignatures of distinct --witness keys required (default 1 with --witness)")
	c.Flags().StringArrayVar(&logs, "checkpoints", nil, "checkpoint log (file or directory) with later checkpoints; repeatable")
	return c
}

func newCertCheckpointCmd() *cobra.Command {
	var chain, log string
	var to target
	c := &cobra.Command{
		Use:   "checkpoint --chain ID [--checkpoint-log PATH]",
		Short: "Sign a checkpoint of a chain's current head",
		Long: `checkpoint signs (origin, size, head) of a chain's current head with the data
directory's key, prints the signed note, appends it to the data directory's own
checkpoint log (<data>/checkpoints/) and, with --checkpoint-log, to the operator's
log outside the data directory. While govhost serve holds the data directory, it
signs (POST /v1/checkpoints, the operator token). govhost already signs every
task's head when the task closes, and every open chain's head when serve stops.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(chain)
			if err != nil {
				return usageErrorf("--chain must be a chain id (UUID)")
			}
			note, err := signCheckpoint(cmd, to, id)
			if err != nil {
				return err
			}
			if log != "" {
				if err := checkpoint.Append(log, note); err != nil {
					return usageError(err)
				}
			}
			_, err = cmd.OutOrStdout().Write(note)
			return err
		},
	}
	to = targetFlags(c)
	c.Flags().StringVar(&chain, "chain", "", "chain id (UUID)")
	c.Flags().StringVar(&log, "checkpoint-log", "", "also append the checkpoint to this file or directory")
	return c
}

// signCheckpoint signs a chain's head through the server that holds the
// data directory or on the directory.
func signCheckpoint(cmd *cobra.Command, to target, chain uuid.UUID) ([]byte, error) {
	remote, err := to.client(cmd.Context())
	if err != nil {
		return nil, err
	}
	if remote != nil {
		cp, err := remote.SignCheckpoint(cmd.Context(), chain)
		return []byte(cp.Note), err
	}
	eng, err := openEngine(cmd.Context(), *to.data)
	if err != nil {
		return nil, err
	}
	defer eng.Close(cmd.Context())
	return eng.SignCheckpoint(cmd.Context(), chain)
}

func newKeyShowCmd() *cobra.Command {
	var all bool
	var data *string
	c := &cobra.Command{
		Use:   "show [--all]",
		Short: "Print the verifier key of the data directory's checkpoint key (created on first use)",
		Long: `show prints the verifier key ("name+hash+base64") a verifier passes to
'govhost cert verify --key'. The private key stays in <data>/keys/signing.key
(mode 0600). --all also prints the verifier keys of rotated-out keys, one a line.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kr, err := openKeyring(cmd, *data)
			if err != nil {
				return err
			}
			keys, err := kr.VerifierKeys()
			if err != nil {
				return err
			}
			if !all {
				keys = keys[:1]
			}
			for _, k := range keys {
				fmt.Fprintln(cmd.OutOrStdout(), k)
			}
			return nil
		},
	}
	data = dataFlag(c)
	c.Flags().BoolVar(&all, "all", false, "also print retired verifier keys")
	return c
}

func newKeyRotateCmd() *cobra.Command {
	var data *string
	c := &cobra.Command{
		Use:   "rotate",
		Short: "Retire the checkpoint key and create a new one; prints the new verifier key",
		Long: `rotate deletes the current private key, keeps its verifier key under
<data>/keys/retired/, and creates a new key that signs from now on. Bundles signed
before stay verifiable with the old verifier key ('govhost cert key show --all').`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kr, err := openKeyring(cmd, *data)
			if err != nil {
				return err
			}
			k, err := kr.Rotate()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), k)
			return nil
		},
	}
	data = dataFlag(c)
	return c
}

func openKeyring(_ *cobra.Command, dir string) (*checkpoint.Keyring, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, usageErrorf("%s is not a data directory", dir)
	}
	kr, err := govhost.OpenKeyring(dir)
	if errors.Is(err, os.ErrPermission) {
		return nil, usageError(err)
	}
	return kr, err
}
