package controller

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// ErrNoSuchRecord refuses a correction of a record the chain does not hold.
var ErrNoSuchRecord = fmt.Errorf("controller: the chain holds no such record")

// Supersede appends a RECORD_SUPERSEDED correcting an earlier record of
// chain (ADR-0087 D2): supersedes_record_id names it, the payload says
// which approved fields are corrected and why. Nothing is mutated; the
// correction pins the corrected record's policy version. It may follow a
// task's TASK_CLOSED (corrections are the only records that may), and it
// changes no grade: a task with a superseded exception stays DEGRADED.
func (c *InvocationController) Supersede(ctx context.Context, chain uuid.UUID, corr governance.Correction) (governance.EvidenceRecord, error) {
	payload, err := corr.Payload()
	if err != nil {
		return governance.EvidenceRecord{}, err
	}
	recs, err := c.cfg.Evidence.Read(ctx, chain, -1)
	if err != nil {
		return governance.EvidenceRecord{}, &governance.GovernanceEvidenceError{Err: err}
	}
	var target *governance.EvidenceRecord
	for i := range recs {
		if recs[i].RecordID == corr.SupersedesRecordID {
			target = &recs[i]
		}
	}
	if target == nil {
		return governance.EvidenceRecord{}, fmt.Errorf("%w: %s on chain %s", ErrNoSuchRecord, corr.SupersedesRecordID, chain)
	}
	out, err := c.appendRecords(ctx, chain, target.PolicyID, target.PolicyVersion, nil, nil, recordSpec{
		typ: governance.RecordSuperseded, operation: target.OperationID, payload: payload,
		supersedes: uuid.NullUUID{UUID: target.RecordID, Valid: true},
	})
	if err != nil {
		return governance.EvidenceRecord{}, &governance.GovernanceEvidenceError{Err: err}
	}
	return out[0], nil
}
