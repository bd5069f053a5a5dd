package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func TestUnavailable_OnlyConnectionFailures(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&pgconn.PgError{Code: "57P01"}, true}, // admin shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // starting up
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "57014"}, true}, // statement timeout
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "42P01"}, false},
		{fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{&governance.PolicyNotFoundError{PolicyID: "x", Version: "1"}, false},
		{errors.New("some rule"), false},
	} {
		require.Equal(t, c.want, Unavailable(c.err), "%v", c.err)
		if c.err != nil {
			require.Equal(t, c.want, errors.Is(Wrap("op", c.err), governance.ErrStoreUnavailable), "%v", c.err)
		}
	}
	require.NoError(t, Wrap("op", nil))
}

func TestNotCommitted(t *testing.T) {
	require.True(t, NotCommitted(&pgconn.PgError{Code: "23505"}), "a statement error rolls back")
	require.False(t, NotCommitted(&pgconn.PgError{Code: "57P01"}), "a shutdown message may follow the commit")
	require.False(t, NotCommitted(io.ErrUnexpectedEOF), "a lost connection leaves the outcome unknown")
}
