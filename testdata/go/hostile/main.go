// Command hostile is a Go-built gate (Go guest SDK) that misbehaves on
// request: the input's "tool" names the misbehaviour. It proves that the
// sandbox holds for a real language runtime, not only for hand-written WAT.
//
//	probe     try to open files, read the environment, the arguments, the
//	          clock and the random source; allow, reporting what it saw in
//	          "detail" as JSON (so the test can check it saw nothing real)
//	membomb   allocate without bound            (gate.memory_limit)
//	panic     panic                             (gate.trap)
//	loop      spin forever                      (gate.timeout)
//	sleep     time.Sleep(1h) under the fake clock  (gate.timeout)
//	anything else: allow
//
// Built by `make fixtures`:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-buildid= \
//		-o internal/wasmfixtures/wasm/hostile_go.wasm ./testdata/go/hostile
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"time"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

// Probe is what the probe saw.
type Probe struct {
	OpenErrors []string `json:"open_errors"`
	Opened     []string `json:"opened"`
	Environ    []string `json:"environ"`
	Home       string   `json:"home"`
	Args       []string `json:"args"`
	UnixNano   int64    `json:"unix_nano"`
	Random     string   `json:"random"`
	ReadDir    int      `json:"read_dir"`
}

var sink [][]byte

func init() {
	sdk.Register(func(in abi.GateInput) abi.GateOutput {
		switch in.Tool {
		case "probe":
			var p Probe
			for _, name := range []string{"/etc/passwd", "/etc/hostname", ".", "/", "/proc/self/environ"} {
				f, err := os.Open(name)
				if err != nil {
					p.OpenErrors = append(p.OpenErrors, name)
					continue
				}
				p.Opened = append(p.Opened, name)
				f.Close()
			}
			if ents, err := os.ReadDir("/"); err == nil {
				p.ReadDir = len(ents)
			}
			p.Environ = os.Environ()
			p.Home = os.Getenv("HOME")
			p.Args = os.Args
			p.UnixNano = time.Now().UnixNano()
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			p.Random = hex.EncodeToString(b)
			detail, _ := json.Marshal(p)
			out := sdk.Allow("probe.done")
			out.Detail = string(detail)
			return out
		case "membomb":
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		case "panic":
			panic("GUEST-TEXT: hostile panic")
		case "loop":
			for {
			}
		case "sleep":
			time.Sleep(time.Hour)
			return sdk.Allow("sleep.done")
		}
		return sdk.Allow("hostile.ok")
	})
}

func main() {}
