package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgdb"
)

// The compare-and-append statement (see the package doc): moved advances
// the head only when it is where the first record says; ins inserts the
// records only when the head moved. One statement is one transaction, so
// the head row and the records commit together or not at all. A stored
// record id or chain hash fails the insert on its UNIQUE index, which
// rolls the head back too; explain then names the rule broken.
const (
	appendIns = `, ins AS (
	INSERT INTO evidence_records (chain_id, sequence, record_id, chain_hash, record)
	SELECT $1, u.seq, u.id, u.hash, u.rec
	FROM unnest($4::bigint[], $2::uuid[], $3::text[], $5::text[]) AS u(seq, id, hash, rec)
	WHERE EXISTS (SELECT 1 FROM moved)
	RETURNING 1
)
SELECT count(*) FROM ins`

	// appendNext: the chain exists and its head is ($6, $7).
	appendNext = `WITH moved AS (
	UPDATE evidence_chains SET head_sequence = $8, head_hash = $9
	WHERE chain_id = $1 AND head_sequence = $6 AND head_hash = $7
	RETURNING 1
)` + appendIns

	// appendGenesis: the chain must not exist yet.
	appendGenesis = `WITH moved AS (
	INSERT INTO evidence_chains (chain_id, head_sequence, head_hash)
	VALUES ($1, $6, $7)
	ON CONFLICT (chain_id) DO NOTHING
	RETURNING 1
)` + appendIns
)

// Append implements evidence.Store.
func (s *Store) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	rcs, err := s.AppendBatch(ctx, []governance.EvidenceRecord{r})
	if err != nil {
		return governance.AppendReceipt{}, err
	}
	return rcs[0], nil
}

// AppendBatch implements evidence.BatchAppender: one statement, all
// records or none.
func (s *Store) AppendBatch(ctx context.Context, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if err := evidence.CheckRecords(ctx, records); err != nil || len(records) == 0 {
		return nil, err
	}
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()

	first, last := records[0], records[len(records)-1]
	// A batch that cannot follow the head its first record names (mixed
	// chains, a gap, a repeat inside it) fails whatever is stored; explain
	// reports it in the order every backend uses.
	if err := evidence.CheckBatch(governance.ChainHead{Sequence: first.Sequence - 1, Hash: first.PreviousChainHash}, records); err != nil {
		return nil, s.explain(ctx, records)
	}
	n := len(records)
	ids, hashes, seqs, values := make([]string, n), make([]string, n), make([]int64, n), make([]string, n)
	for i, r := range records {
		v, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("pgstore: encode record %s: %w", r.RecordID, err)
		}
		ids[i], hashes[i], seqs[i], values[i] = r.RecordID.String(), r.ChainHash, r.Sequence, string(v)
	}
	sql, args := appendNext, []any{first.ChainID, ids, hashes, seqs, values, first.Sequence - 1, first.PreviousChainHash, last.Sequence, last.ChainHash}
	if first.Sequence == 0 && first.PreviousChainHash == "" {
		sql, args = appendGenesis, []any{first.ChainID, ids, hashes, seqs, values, last.Sequence, last.ChainHash}
	}

	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, pgdb.Wrap("append: connect", err)
	}
	name := pgdb.ConnName(conn.Conn())
	var inserted int
	err = conn.QueryRow(ctx, sql, args...).Scan(&inserted)
	conn.Release()
	switch {
	case err == nil && inserted == n:
		return receipts(records), nil
	case err == nil:
		return nil, s.explain(ctx, records)
	case isUniqueViolation(err):
		// A stored (or concurrently stored) id or hash: a conflict,
		// reported like any other.
		return nil, s.explain(ctx, records)
	case pgdb.NotCommitted(err):
		return nil, pgdb.Wrap("append", err)
	}
	// The connection was lost after the statement went out: it may have
	// committed. Settle that backend and read back before answering.
	var stored bool
	serr := pgdb.Settle(ctx, s.pool, name, s.opts.ReadBackTimeout, func(ctx context.Context, q pgdb.Querier) error {
		var hash string
		err := q.QueryRow(ctx, `SELECT chain_hash FROM evidence_records WHERE record_id = $1`, last.RecordID).Scan(&hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		stored = err == nil && hash == last.ChainHash
		return err
	})
	switch {
	case serr != nil:
		return nil, fmt.Errorf("pgstore: append to chain %s: connection lost during commit (%v): %w", first.ChainID, err, serr)
	case stored:
		return receipts(records), nil
	}
	return nil, fmt.Errorf("pgstore: append to chain %s: connection lost during commit; read back: nothing appended: %w: %w",
		first.ChainID, governance.ErrStoreUnavailable, err)
}

func receipts(records []governance.EvidenceRecord) []governance.AppendReceipt {
	out := make([]governance.AppendReceipt, len(records))
	for i, r := range records {
		out[i] = governance.ReceiptFor(r)
	}
	return out
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// explain says why an append was refused, reading the store afresh and
// applying the rules in evidence's order: a stored record id, then a
// stored chain hash (record by record), then the batch's position against
// the current head.
func (s *Store) explain(ctx context.Context, records []governance.EvidenceRecord) error {
	n := len(records)
	ids, hashes := make([]string, n), make([]string, n)
	for i, r := range records {
		ids[i], hashes[i] = r.RecordID.String(), r.ChainHash
	}
	rows, err := s.pool.Query(ctx, `SELECT record_id::text, chain_hash FROM evidence_records
		WHERE record_id = ANY($1::uuid[]) OR chain_hash = ANY($2::text[])`, ids, hashes)
	if err != nil {
		return pgdb.Wrap("append: check duplicates", err)
	}
	storedIDs, storedHashes := map[string]bool{}, map[string]bool{}
	for rows.Next() {
		var id, hash string
		if err := rows.Scan(&id, &hash); err != nil {
			rows.Close()
			return pgdb.Wrap("append: check duplicates", err)
		}
		storedIDs[id], storedHashes[hash] = true, true
	}
	if err := rows.Err(); err != nil {
		return pgdb.Wrap("append: check duplicates", err)
	}
	for i, r := range records {
		if storedIDs[ids[i]] {
			return evidence.DuplicateID(r)
		}
		if storedHashes[r.ChainHash] {
			return evidence.DuplicateHash(r)
		}
	}
	head, err := s.head(ctx, records[0].ChainID)
	if err != nil {
		return err
	}
	if err := evidence.CheckBatch(head, records); err != nil {
		return err
	}
	// NB: heads only advance and nothing is deleted, so a statement that
	// refused a batch which fits the head read after it means the tables
	// were edited behind the store. Refuse; never guess.
	return &governance.EvidenceConflictError{
		ChainID: records[0].ChainID.String(), RecordID: records[0].RecordID.String(), Kind: governance.ConflictStaleHead,
		Reason: "the chain changed during the append",
	}
}
