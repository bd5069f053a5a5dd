package pgstore

// component names the evidence tables' row in govhost_schema_versions.
const component = "evidence"

// migrations take the schema from version i to i+1; append only, never
// edit one that has shipped.
var migrations = []string{
	// 1: chains and records.
	`CREATE TABLE evidence_chains (
		chain_id      uuid PRIMARY KEY,
		head_sequence bigint NOT NULL CHECK (head_sequence >= 0),
		head_hash     text NOT NULL
	);
	CREATE TABLE evidence_records (
		chain_id   uuid NOT NULL,
		sequence   bigint NOT NULL CHECK (sequence >= 0),
		record_id  uuid NOT NULL,
		chain_hash text NOT NULL,
		record     text NOT NULL,
		CONSTRAINT evidence_records_pkey PRIMARY KEY (chain_id, sequence),
		CONSTRAINT evidence_records_record_id_key UNIQUE (record_id),
		CONSTRAINT evidence_records_chain_hash_key UNIQUE (chain_hash)
	)`,
}
