package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
)

// newGrantCmd is `govhost grant exception|break-glass`: POST
// /v1/tasks/{task_id}/exceptions or /break-glass with the operator token.
// Tasks are open only in a running server, so it needs one.
func newGrantCmd(name string, breakGlass bool) *cobra.Command {
	var task, gate, tool, reason, actor, issuer string
	var ttl time.Duration
	var to target
	excuses := "a soft deny"
	if breakGlass {
		excuses = "a soft or a hard deny"
	}
	c := &cobra.Command{
		Use:   name + " --task ID --gate G --tool T --reason CODE --for DURATION [--actor KIND:ID] [--issuer NAME]",
		Short: "Record a single-use grant that excuses " + excuses + " of one gate for one tool in an open task",
		Long: `The grant is recorded on the task's evidence chain (EXCEPTION_GRANTED, with who
issued it: operator:<issuer>) before it can excuse anything; it excuses the first
matching deny of --gate for --tool by the task's actor (or --actor) before it
expires (--for: there is no default), and makes the task's certificate DEGRADED.
It needs a running govhost serve on --data (or --addr) and its operator token
(DATA/operator-token). It prints the grant as JSON.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(task)
			if err != nil {
				return usageErrorf("--task must be a task id (UUID)")
			}
			if ttl <= 0 {
				return usageErrorf("--for must be a positive duration (10m): a grant has no default expiry")
			}
			req := api.ExceptionRequest{GateID: gate, ToolID: tool, ReasonCode: reason, ExpiresAt: time.Now().Add(ttl).UTC(), Issuer: issuer}
			if actor != "" {
				kind, aid, ok := strings.Cut(actor, ":")
				if !ok || kind == "" || aid == "" {
					return usageErrorf("--actor must be kind:id")
				}
				req.Actor = &governance.ActorRef{Kind: kind, ID: aid}
			}
			remote, err := to.client(cmd.Context())
			if err != nil {
				return err
			}
			if remote == nil {
				return usageErrorf("no govhost serve runs on %s: grants go to an open task of a running server (start one, or name it with --addr)", *to.data)
			}
			grant := remote.GrantException
			if breakGlass {
				grant = remote.BreakGlass
			}
			g, err := grant(cmd.Context(), id, req)
			if err != nil {
				return grantError(err)
			}
			text, _ := marshalOut(g)
			fmt.Fprintln(cmd.OutOrStdout(), string(text))
			return nil
		},
	}
	to = targetFlags(c)
	f := c.Flags()
	f.StringVar(&task, "task", "", "the open task (its task_id)")
	f.StringVar(&gate, "gate", "", "the gate whose deny it excuses (gate_id)")
	f.StringVar(&tool, "tool", "", "the tool it excuses the deny for")
	f.StringVar(&reason, "reason", "", "reason code recorded with the grant (incident.1234)")
	f.DurationVar(&ttl, "for", 0, "how long the grant may be used (required)")
	f.StringVar(&actor, "actor", "", "whom it excuses, as kind:id (default: the task's actor)")
	f.StringVar(&issuer, "issuer", "", "who issues it, recorded as operator:<issuer> (default operator:operator)")
	return c
}

// grantError says which token a refused grant needed.
func grantError(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == "forbidden" {
		return fmt.Errorf("%w (give the operator token: --token-file DATA/operator-token)", err)
	}
	return err
}
