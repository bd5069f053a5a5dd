package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

func newChainSupersedeCmd() *cobra.Command {
	var chain, record, fields, reason, corrections string
	var data *string
	c := &cobra.Command{
		Use:   "supersede --chain ID --record ID --fields F[,F...] --reason-code CODE [--corrections JSON]",
		Short: "Append a RECORD_SUPERSEDED correcting an earlier record (nothing is mutated)",
		Long: `supersede appends a correction of one record of a chain: supersedes_record_id
names it, the payload lists the corrected approved fields, a stable reason code
and, optionally, the corrected values (a JSON object keyed by those fields). The
corrected record stays on the chain; a task whose exception is superseded stays
DEGRADED. It prints the new record.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			chainID, err := uuid.Parse(chain)
			if err != nil {
				return usageErrorf("--chain must be a chain id (UUID)")
			}
			recordID, err := uuid.Parse(record)
			if err != nil {
				return usageErrorf("--record must be a record id (UUID)")
			}
			corr := governance.Correction{SupersedesRecordID: recordID, ReasonCode: reason}
			if fields != "" {
				corr.CorrectedFields = strings.Split(fields, ",")
			}
			if corrections != "" {
				v, err := governance.ParseJSON([]byte(corrections))
				m, ok := v.(map[string]any)
				if err != nil || !ok {
					return usageErrorf("--corrections must be a JSON object")
				}
				corr.Corrections = m
			}
			if _, err := corr.Payload(); err != nil {
				return usageError(err)
			}
			eng, err := openEngine(cmd.Context(), *data)
			if err != nil {
				return err
			}
			defer eng.Close(cmd.Context())
			ctl, err := eng.NewController(controller.Config{})
			if err != nil {
				return err
			}
			rec, err := ctl.Supersede(cmd.Context(), chainID, corr)
			if err != nil {
				return err
			}
			out, _ := json.Marshal(rec)
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	data = dataFlag(c)
	c.Flags().StringVar(&chain, "chain", "", "chain id (UUID)")
	c.Flags().StringVar(&record, "record", "", "id of the record to correct (UUID)")
	c.Flags().StringVar(&fields, "fields", "", "corrected approved fields, comma-separated")
	c.Flags().StringVar(&reason, "reason-code", "", "stable reason code of the correction")
	c.Flags().StringVar(&corrections, "corrections", "", "corrected values as a JSON object keyed by field (optional)")
	return c
}
