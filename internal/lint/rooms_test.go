package lint

// room is one row of DESIGN.md's "Rooms" table: a package of the module
// (by its folder, "." for the root) and the packages of ours it may
// import. Every package has its own row (TestRooms_EveryPackageHasARow),
// so a new package says where it stands before it can land.
type room struct {
	// may lists the packages of ours this one may import. "x/..." is x and
	// every package below it.
	may []string
	// today lists arrows the code still has and DESIGN.md removes (a row
	// marked "today" there), with the step that removes each. An arrow
	// listed here must still exist: when the step lands, its entry goes
	// (TestRooms_TodayArrowsStillExist).
	today []arrow
	// testOnly: only tests import this package (fixtures, conformance
	// suites, fault injection).
	testOnly bool
	// planned: DESIGN.md names the package (marked new) and the tree does
	// not have it yet.
	planned bool
}

// arrow is an import DESIGN.md removes, and the step that removes it.
type arrow struct {
	to, step string
}

// rooms is DESIGN.md's table, floor by floor, as the tree stands. Where
// the table and the tree differ, the row follows the tree as designed and
// says so in a comment (the lead reconciles DESIGN.md).
var rooms = map[string]room{
	// Floor 1: vocabularies (import nothing of ours).
	"governance":   {},
	"abi":          {},
	"abi/jsonscan": {planned: true},
	"checkpoint":   {},

	// Floor 2: contracts and their backends.
	"evidence":                {may: []string{"governance"}},
	"evidence/storetest":      {may: []string{"evidence", "governance"}, testOnly: true},
	"evidence/pebblestore":    {may: []string{"evidence", "governance"}},
	"evidence/pgstore":        {may: []string{"evidence", "governance", "internal/pgdb"}},
	"policy":                  {may: []string{"governance", "policy/internal/resolve"}},
	"policy/internal/resolve": {may: []string{"governance"}},
	"policy/storetest":        {may: []string{"policy", "governance"}, testOnly: true},
	"policy/pebblestore":      {may: []string{"policy", "policy/internal/resolve", "governance"}},
	"policy/pgstore":          {may: []string{"policy", "policy/internal/resolve", "governance", "internal/pgdb"}},
	// DESIGN.md: governance only; the templates name abi's operations and
	// tool ids (the one vocabulary).
	"policy/policyfile": {may: []string{"governance", "abi"}},
	// Not in DESIGN.md's table: the default coding-agent policy's profile
	// files (embedded), the one definition serve, mcp and the hooks install.
	"policy/profiles": {},

	// Floor 2: the gate runtime (host side).
	// DESIGN.md's row lacks governance: host.go checks a claimed digest
	// with governance.IsDigest.
	"host":                    {may: []string{"abi", "governance", "host/internal/..."}},
	"host/internal/native":    {may: []string{"abi", "host/internal/fault", "host/internal/interrupt", "host/internal/memcap", "host/internal/wire"}},
	"host/internal/extismrt":  {may: []string{"abi", "host/internal/fault", "host/internal/interrupt", "host/internal/memcap", "host/internal/wire"}},
	"host/internal/interrupt": {},
	"host/internal/memcap":    {},
	"host/internal/pool":      {},
	"host/internal/fault":     {},
	"host/internal/wire":      {may: []string{"abi", "host/internal/fault"}},
	"pathfacts":               {may: []string{"abi"}},

	// Floor 2: the guest side (compiles for wasip1).
	"sdk":                {may: []string{"abi"}},
	"sdk/gatecases":      {may: []string{"abi"}},
	"sdk/c":              {},
	"sdk/rust":           {},
	"sdk/assemblyscript": {},
	// The built-in gates are Rust modules (plugins/rust, embedded by
	// plugins/builtin), one implementation per gate: plugins/<gate> keeps
	// only its README and case table (no Go package), so DESIGN.md's rows
	// for their Go code, plugins/internal/fnmatch and the planned
	// plugins/internal/pytext (Python's texts live in gatekit.rs) have none.
	"plugins/internal/gatetable": {may: []string{"abi", "sdk/gatecases"}, testOnly: true},
	"plugins/builtin":            {},

	// Floor 3: gate tooling.
	"gatetest":  {may: []string{"abi", "host", "sdk/gatecases", "plugins/builtin"}},
	"gatebench": {may: []string{"abi", "host", "sdk/gatecases"}},
	"scaffold":  {may: []string{"sdk/c", "sdk/rust", "sdk/assemblyscript"}},

	// Floor 4: the governed call.
	"certify": {may: []string{"governance", "evidence", "checkpoint"}},
	// Not in DESIGN.md's table: the insider's forgeries certify's tests
	// (and the CLI's) refuse.
	"certify/forgetest": {may: []string{"governance"}, testOnly: true},
	"controller":        {may: []string{"governance", "evidence", "policy", "abi", "certify"}},

	// Floor 5: the assembly. DESIGN.md's row lacks abi (the declared
	// reason codes of a gate, reasoncodes.go) and internal/pgdb (the hook
	// session store on PostgreSQL, sessions.go: a room the root holds that
	// the table does not name). The built-ins' host-side configuration
	// step (pathguard's roots resolved) is the root's own, keyed by module
	// digest (builtinconfig.go): no arrow into a gate's package.
	".": {
		may: []string{"governance", "abi", "evidence/...", "policy/...", "controller", "certify", "checkpoint", "host",
			"pathfacts", "plugins/builtin", "internal/pgdb"},
	},

	// Floor 6: agents.
	"agents": {may: []string{"governance", "abi"}},
	// DESIGN.md's row lacks pathfacts: a hook resolves the session's
	// workspace and the call's path facts on the host side (hooks/facts.go).
	"hooks":       {may: []string{"agents", "controller", "governance", "abi", "pathfacts"}},
	"hookinstall": {may: []string{"agents"}},
	"hookclient":  {may: []string{"agents", "api"}},

	// Floor 7: the sidecar. service's row in DESIGN.md lacks certify (the
	// bundle and certificate checks it answers with), policy (the
	// unbinding it validates) and policy/profiles (the default policy's
	// id and version it reports).
	"service": {may: []string{".", "controller", "hooks", "agents", "governance", "evidence", "policy", "policy/policyfile",
		"policy/profiles", "pathfacts", "abi", "certify"}},
	"api": {may: []string{"governance"}},
	// DESIGN.md's row lacks abi and controller (the governed call a wire
	// request maps onto, the broker's events it streams), server/wire and
	// internal/sse.
	"server": {may: []string{"service", "api", "governance", "abi", "controller", "server/wire", "internal/bearer", "internal/sse"}},
	// Not in DESIGN.md's table: the one mapping of service's answers onto
	// the wire bodies (server, console, the CLI's local mode).
	"server/wire":   {may: []string{"service", "api", "governance", "controller", "abi"}},
	"server/client": {may: []string{"api", "governance"}},
	// DESIGN.md's row lacks governance (the records it shows), server/wire
	// and internal/sse.
	"console":         {may: []string{"service", "api", "server/wire", "governance", "internal/sse"}},
	"internal/bearer": {},
	// Not in DESIGN.md's table: the server-sent event loop the API and the
	// console share.
	"internal/sse": {},

	// Floor 8: the MCP proxy.
	"mcp": {
		may: []string{".", "controller", "governance", "abi", "api", "server/client", "internal/bearer"},
		today: []arrow{
			{"pathfacts", "embedded session opening into the root (the session's workspace)"},
		},
	},
	"mcp/internal/e2eproxy": {may: []string{".", "mcp", "controller", "governance", "abi", "host"}},

	// Floor 9: commands (flags and output only).
	"cmd/govhost":      {may: []string{"..."}},
	"cmd/govhost-hook": {may: []string{"hookclient"}},
	// Not in DESIGN.md's table: the demo scenario of `govhost demo`, in
	// process on the root or through a running server.
	"internal/demo": {may: []string{".", "controller", "governance", "abi", "api", "server/client", "policy/policyfile"}},

	// Beside the house.
	"internal/pgdb":         {may: []string{"governance"}},
	"internal/pgtest":       {testOnly: true},
	"internal/wasmfixtures": {testOnly: true},
	"internal/lint":         {},
	"examples/go":           {may: []string{"sdk", "abi"}},
	"examples/toolgate":     {may: []string{"sdk", "abi"}},
}

// thirdParty names, for each third-party module that is the point of a
// room, the packages that may import it; any other third-party import in a
// non-test file is refused. (github.com/google/uuid is everyone's.)
var thirdParty = map[string][]string{
	"github.com/google/uuid":                 {"..."},
	"github.com/tetratelabs/wazero":          {"host", "host/internal/..."},
	"github.com/extism/go-sdk":               {"host/internal/extismrt"},
	"github.com/cockroachdb/pebble":          {".", "evidence/pebblestore", "policy/pebblestore"},
	"github.com/jackc/pgx":                   {".", "evidence/pgstore", "policy/pgstore", "internal/pgdb", "internal/pgtest"},
	"github.com/modelcontextprotocol/go-sdk": {"mcp"},
	"github.com/prometheus/client_golang":    {"server"},
	"github.com/spf13/cobra":                 {"cmd/govhost"},
	"go.yaml.in/yaml":                        {"sdk/gatecases"},
	"golang.org/x/mod/sumdb/note":            {"checkpoint"},
	"github.com/stretchr/testify":            {"evidence/storetest", "policy/storetest", "plugins/internal/gatetable"},
}

// noIO: packages that are pure translation or vocabulary and touch neither
// files, processes nor the network.
var noIO = []string{"agents", "governance", "abi"}

// noHTTP: packages that know nothing of HTTP (the one HTTP edge is
// server, with the console beside it, the client, and the proxies).
var noHTTP = map[string][]arrow{
	"service":    nil,
	"controller": nil,
	"agents":     nil,
	"hooks":      nil,
}
