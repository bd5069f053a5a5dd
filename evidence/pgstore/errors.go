package pgstore

import (
	"errors"

	"github.com/govhost/govhost/internal/pgdb"
)

var (
	// ErrSchemaTooNew: the database's evidence tables were written by a
	// newer govhost; this build refuses to touch them.
	ErrSchemaTooNew = pgdb.ErrSchemaTooNew

	// ErrCommitUnknown: the connection was lost after an append was sent
	// and its outcome could not be read back in time. The records may be
	// committed; Head or Read tells once the database is back. Also
	// matches governance.ErrStoreUnavailable.
	ErrCommitUnknown = pgdb.ErrCommitUnknown

	// ErrCorrupt: a stored record no longer decodes (Read). Verify reports
	// it as CONTENT_MISMATCH instead.
	ErrCorrupt = errors.New("pgstore: stored evidence is corrupt")

	// ErrDSN: the connection string does not parse (its text is not
	// repeated: it may hold a password).
	ErrDSN = pgdb.ErrDSN

	// ErrClosed: the store was closed.
	ErrClosed = errors.New("pgstore: store closed")
)
