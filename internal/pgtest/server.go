package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries means no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl, postgres): apt-get install postgresql, or set GOVHOST_PG_BINDIR")

// Options configures Start. The zero value works.
type Options struct {
	// Durable keeps fsync on (the server's default). Off by default: the
	// tests that stop the server (fast or immediate) lose nothing without
	// it, since the machine itself does not crash; benchmarks turn it on.
	Durable bool
	// Settings are extra postgresql.conf lines ("max_connections = 300").
	Settings []string
}

// Server is one running PostgreSQL cluster on 127.0.0.1, superuser
// "postgres", trust authentication on loopback only.
type Server struct {
	BinDir string
	Dir    string // the cluster's data directory
	Port   int
	root   string // the temporary folder holding Dir and the log
	cred   *syscall.Credential
}

// BinDir returns the directory holding initdb, pg_ctl and postgres:
// GOVHOST_PG_BINDIR, else the newest /usr/lib/postgresql/*/bin (Debian),
// else the directory of pg_ctl on PATH.
func BinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return false
			}
		}
		return true
	}
	if d := os.Getenv("GOVHOST_PG_BINDIR"); d != "" {
		if has(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w (GOVHOST_PG_BINDIR=%s lacks them)", ErrNoBinaries, d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	return "", ErrNoBinaries
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initializes a new cluster in a temporary folder and starts it on a
// free loopback port. The caller must Close it.
func Start(opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "govhost-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{BinDir: bin, root: root, Dir: filepath.Join(root, "data")}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return nil, err
		}
		if err := os.Chown(root, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	if out, err := s.run("initdb", "-D", s.Dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	conf := []string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(s.Port),
		"unix_socket_directories = ''",
		"max_connections = 300",
		"shared_buffers = 64MB",
		"log_min_messages = warning",
	}
	if !opts.Durable {
		conf = append(conf, "fsync = off", "full_page_writes = off")
	}
	conf = append(conf, opts.Settings...)
	f, err := os.OpenFile(filepath.Join(s.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString("\n# pgtest\n" + strings.Join(conf, "\n") + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, err
	}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// unprivileged returns the user PostgreSQL runs as when we are root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("pgtest: running as root and no postgres or nobody user to run PostgreSQL as")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs one of the server's binaries as the server's user.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.BinDir, name), args...)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// Restart starts the (stopped) server again on its port and waits until it
// accepts connections.
func (s *Server) Restart() error {
	out, err := s.run("pg_ctl", "-D", s.Dir, "-l", filepath.Join(s.root, "server.log"), "-w", "-t", "60", "-s", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.root, "server.log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server: mode "fast" (roll back sessions, checkpoint) or
// "immediate" (abort every process, recover from the WAL on the next
// start, as after a crash).
func (s *Server) Stop(mode string) error {
	out, err := s.run("pg_ctl", "-D", s.Dir, "-m", mode, "-w", "-t", "60", "-s", "stop")
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop -m %s: %w\n%s", mode, err, out)
	}
	return nil
}

// Close stops the server (immediate: nothing is kept) and removes its
// folder. Close is safe on a server that failed to start.
func (s *Server) Close() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(s.Dir, "postmaster.pid")); statErr == nil {
		err = s.Stop("immediate")
	}
	return errors.Join(err, os.RemoveAll(s.root))
}

// DSN returns a connection string for database db ("postgres" when empty)
// as the superuser, with extra key=value settings appended.
func (s *Server) DSN(db string, extra ...string) string {
	if db == "" {
		db = "postgres"
	}
	parts := append([]string{"host=127.0.0.1", "port=" + strconv.Itoa(s.Port), "user=postgres", "dbname=" + db, "sslmode=disable"}, extra...)
	return strings.Join(parts, " ")
}

// URL returns the postgres:// form of DSN for database db.
func (s *Server) URL(db string) string {
	if db == "" {
		db = "postgres"
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// Exec runs one SQL statement as the superuser on database db.
func (s *Server) Exec(ctx context.Context, db, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
