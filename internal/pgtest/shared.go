package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

type sharedServer struct {
	once sync.Once
	srv  *Server
	err  error
}

// shared is the fsync-off server of the tests; durable the fsync-on one of
// the benchmarks.
var shared, durable sharedServer

// Main runs the tests and stops the shared server if one was started:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	for _, s := range []*sharedServer{&shared, &durable} {
		if s.srv != nil {
			if err := s.srv.Close(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	return code
}

// Require skips (or, with CI set, fails) t when err says PostgreSQL is
// missing, and fails it on any other error.
func Require(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoBinaries) && os.Getenv("CI") == "":
		t.Skipf("skipping: %v", err)
	default:
		t.Fatal(err)
	}
}

// Shared returns the server this test binary shares, starting it on first
// use (fsync off: see Options.Durable). Tests must not stop it; use Start
// for that.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = Start(Options{}) })
	Require(t, shared.err)
	return shared.srv
}

// SharedDurable is Shared with fsync on (Options.Durable), for benchmarks
// whose figures must include the WAL flush.
func SharedDurable(t testing.TB) *Server {
	t.Helper()
	durable.once.Do(func() { durable.srv, durable.err = Start(Options{Durable: true}) })
	Require(t, durable.err)
	return durable.srv
}

// Schema creates an empty schema on the shared server and returns a DSN
// whose search_path is that schema, so each test's stores see only their
// own tables. Schemas are not dropped: the server's folder goes at the end.
func Schema(t testing.TB) string {
	t.Helper()
	return SchemaOn(t, Shared(t))
}

// SchemaOn is Schema on a given server.
func SchemaOn(t testing.TB, s *Server) string {
	t.Helper()
	name := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	ctx := context.Background()
	if err := s.Exec(ctx, "", "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	return s.DSN("", "search_path="+name)
}
