package gatebench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk/gatecases"
)

// ErrNoInputs is returned for an input file without any request.
var ErrNoInputs = errors.New("gatebench: no inputs")

// Workload is what a benchmark sends: the requests, cycled through in
// order, and the configuration of the gate.
type Workload struct {
	Inputs []abi.GateInput
	Config json.RawMessage
}

// LoadWorkload reads the requests of a benchmark from path: a cases file
// (JSON with "cases", or YAML; its inputs, and its file-level config), or
// one GateInput JSON object, or JSON Lines of them.
func LoadWorkload(path string) (Workload, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Workload{}, err
	}
	if isCasesFile(raw) || !startsJSON(raw) {
		f, err := gatecases.LoadFile(path)
		if err != nil {
			return Workload{}, err
		}
		w := Workload{Config: f.Config}
		for _, c := range f.Cases {
			w.Inputs = append(w.Inputs, gatecases.Input(c, f.Gate))
		}
		return w, nil
	}
	var w Workload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	for i := 1; ; i++ {
		var in abi.GateInput
		if err := dec.Decode(&in); err == io.EOF {
			break
		} else if err != nil {
			return Workload{}, fmt.Errorf("gatebench: %s: input %d: %w", path, i, err)
		}
		if in.Tool == "" {
			return Workload{}, fmt.Errorf("gatebench: %s: input %d has no tool", path, i)
		}
		w.Inputs = append(w.Inputs, gatecases.Input(gatecases.Case{Input: in}, "bench"))
	}
	if len(w.Inputs) == 0 {
		return Workload{}, ErrNoInputs
	}
	return w, nil
}

func startsJSON(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// isCasesFile reports whether raw is a JSON object with a "cases" member.
func isCasesFile(raw []byte) bool {
	var probe struct {
		Cases json.RawMessage `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	return dec.Decode(&probe) == nil && len(probe.Cases) > 0
}
