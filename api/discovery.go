package api

// ServeFileName is the file in a data directory where a running `govhost
// serve` records where it listens, so that every other command on that
// directory talks to it instead of opening the directory (which the
// server holds). It holds the address, never a token; serve writes it
// atomically once ready and removes it on a clean shutdown. A file whose
// server does not answer is stale and ignored.
const ServeFileName = "serve.json"

// ServeRecord is the content of ServeFileName.
type ServeRecord struct {
	// URL is the server's base URL ("http://127.0.0.1:8181").
	URL string `json:"url"`
	// PID is the serving process.
	PID int `json:"pid"`
}

// Token files in a data directory (mode 0600, created by serve): the
// agents' bearer token and the operator's (operator routes need the
// latter; it is accepted on every agent route too).
const (
	TokenFileName         = "token"
	OperatorTokenFileName = "operator-token"
)
