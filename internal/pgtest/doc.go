// Package pgtest starts real PostgreSQL servers for tests, from the
// machine's Debian packages (initdb into a temporary folder, pg_ctl on a
// loopback port, stopped at the end).
//
// Tests call Shared for the one server a test binary shares (start it
// lazily, stop it in TestMain through Main) and Schema for an empty schema
// of their own on it; tests that stop or restart the database call Start
// for a server of their own. When no PostgreSQL binaries are found the
// tests skip with a message naming what is missing, except when CI is set
// in the environment: then they fail, so CI cannot pass by skipping.
//
// Tests run as root in CI and PostgreSQL refuses to run as root: the
// server then runs as the "postgres" system user the Debian package
// creates (or "nobody"), owning its temporary folder.
package pgtest
