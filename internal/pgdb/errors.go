package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/govhost/govhost/governance"
)

// Unavailable reports whether err means the database could not be reached
// or did not answer: a network or connect failure, the server shutting
// down or starting up, too many connections, or a statement cancelled by
// its timeout. A caller's own cancellation is not unavailability.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code[:2] == "08", // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // admin / crash shutdown, cannot connect now
			pe.Code == "53300",                     // too many connections
			pe.Code == "57014",                     // query canceled (statement_timeout)
			pe.Code == "55P03", pe.Code == "40P01": // lock not available, deadlock: retryable by the caller
			return true
		}
		return false
	}
	// NB: only failures of the connection itself. Anything else that is
	// not a server answer (a rule error returned from inside a
	// transaction, say) is not unavailability.
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// NotCommitted reports whether a write that failed with err certainly did
// not commit: nothing was sent, or the server answered with an error of
// the statement itself. Any other failure (the connection lost after the
// statement or COMMIT was sent) leaves the outcome unknown.
func NotCommitted(err error) bool {
	if pgconn.SafeToRetry(err) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// A server error answering the statement means the transaction
		// rolled back; a shutdown or crash message may arrive after the
		// commit record is flushed.
		return pe.Code[:2] != "08" && pe.Code[:3] != "57P" && pe.Code[:2] != "XX"
	}
	return false
}

// Wrap adds what was being done to a database error and, when the
// database was unavailable, governance.ErrStoreUnavailable. Wrap(op, nil)
// is nil.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if Unavailable(err) {
		return fmt.Errorf("pgstore: %s: %w: %w", op, governance.ErrStoreUnavailable, err)
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}
