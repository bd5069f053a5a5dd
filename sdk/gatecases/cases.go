// Package gatecases owns the gate test cases format: a JSON or YAML file that
// lists requests (GateInput), configurations and the verdict each must get.
// Gate authors' own tests, the built-in gates' tables
// (plugins/<name>/testdata/cases.json) and `govhost test` (package gatetest,
// which runs a file through a module on the host) all read it here; Compare
// is the one comparison of a verdict with an expectation.
package gatecases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/govhost/govhost/abi"
)

// File is a cases file. Config is the configuration of every case that does
// not give its own (absent: {}).
type File struct {
	Gate        string          `json:"gate,omitempty"`
	Description string          `json:"description,omitempty"`
	Config      json.RawMessage `json:"config,omitempty"`
	Cases       []Case          `json:"cases"`
}

// Case is one request with the verdict it must get. Config, when present,
// replaces the file's (and the runner's default) configuration. Source, Note
// and StricterThanOriginal document where the expectation comes from.
type Case struct {
	Name                 string          `json:"name"`
	Source               string          `json:"source,omitempty"`
	Note                 string          `json:"note,omitempty"`
	StricterThanOriginal string          `json:"stricter_than_original,omitempty"`
	Config               json.RawMessage `json:"config,omitempty"`
	Input                abi.GateInput   `json:"input"`
	Want                 Want            `json:"want"`
}

// Want is the expected verdict. Decision and ReasonCode are always checked;
// a nil text field is not checked, an empty one must be empty. A failure of
// the guest is expected as the host reports it: a deny with the host's
// reason code (gate.config_rejected for a refused configuration).
type Want struct {
	Decision    abi.Decision `json:"decision"`
	ReasonCode  string       `json:"reason_code"`
	Message     *string      `json:"message,omitempty"`
	Detail      *string      `json:"detail,omitempty"`
	MatchedRule *string      `json:"matched_rule,omitempty"`
	// DenyMessage is what a require_approval shows if the approver denies.
	DenyMessage *string `json:"deny_message,omitempty"`
}

// FileError reports a cases file that cannot be used: unreadable, not JSON
// or YAML of the File shape, or with an invalid case.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return "gatecases: " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// ErrNoCases is wrapped by the FileError of a file without cases.
var ErrNoCases = errors.New("no cases")

// LoadFile reads and checks the cases file at path. Files named *.yaml or
// *.yml are YAML, *.json JSON; others are JSON when they start with '{'.
func LoadFile(path string) (File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return File{}, &FileError{Path: path, Err: err}
	}
	f, err := Parse(raw, isYAML(path, raw))
	if err != nil {
		return File{}, &FileError{Path: path, Err: err}
	}
	return f, nil
}

func isYAML(path string, raw []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return true
	case ".json":
		return false
	}
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || t[0] != '{'
}

// Parse decodes and checks a cases document (YAML when yamlSyntax is set,
// JSON otherwise). Unknown fields are refused, so a misspelt expectation
// cannot silently go unchecked.
func Parse(raw []byte, yamlSyntax bool) (File, error) {
	if yamlSyntax {
		var doc any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return File{}, fmt.Errorf("YAML: %w", err)
		}
		j, err := json.Marshal(doc)
		if err != nil {
			return File{}, fmt.Errorf("YAML: not representable as JSON: %w", err)
		}
		raw = j
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, err
	}
	if dec.More() {
		return File{}, errors.New("trailing data after the cases document")
	}
	return f, f.check()
}

func (f File) check() error {
	if len(f.Cases) == 0 {
		return ErrNoCases
	}
	if err := checkConfig(f.Config); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	seen := map[string]bool{}
	for i, c := range f.Cases {
		if c.Name == "" {
			return fmt.Errorf("case %d has no name", i+1)
		}
		if seen[c.Name] {
			return fmt.Errorf("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		if !c.Want.Decision.Valid() {
			return fmt.Errorf("case %q: want.decision %q is not allow, deny or require_approval", c.Name, c.Want.Decision)
		}
		if !abi.ValidReasonCode(c.Want.ReasonCode) {
			return fmt.Errorf("case %q: want.reason_code %q is not a valid reason code", c.Name, c.Want.ReasonCode)
		}
		if c.Input.Tool == "" {
			return fmt.Errorf("case %q: input.tool is required", c.Name)
		}
		if err := checkConfig(c.Config); err != nil {
			return fmt.Errorf("case %q: config: %w", c.Name, err)
		}
	}
	return nil
}

// checkConfig accepts an absent configuration, null or a JSON object.
func checkConfig(raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) || t[0] == '{' {
		return nil
	}
	return errors.New("must be a JSON object")
}

// Difference is one field whose value is not the expected one.
type Difference struct {
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// Input is the GateInput a case sends: its input with the fields a case
// may leave out filled in (gate_id, phase check, empty arguments).
func Input(c Case, gateID string) abi.GateInput {
	in := c.Input
	in.ABIVersion = abi.Version
	if in.GateID == "" {
		in.GateID = gateID
	}
	if in.Phase == "" {
		in.Phase = abi.PhaseCheck
	}
	if len(bytes.TrimSpace(in.Arguments)) == 0 || bytes.Equal(bytes.TrimSpace(in.Arguments), []byte("null")) {
		in.Arguments = json.RawMessage(`{}`)
	}
	return in
}

// Compare lists the fields of got that differ from want, in a fixed order;
// none means the case passes.
func Compare(want Want, got abi.GateOutput) []Difference {
	var diff []Difference
	add := func(field, w, g string) {
		if w != g {
			diff = append(diff, Difference{Field: field, Want: w, Got: g})
		}
	}
	add("decision", string(want.Decision), string(got.Decision))
	add("reason_code", want.ReasonCode, got.ReasonCode)
	for _, f := range []struct {
		field string
		want  *string
		got   string
	}{{"message", want.Message, got.Message}, {"detail", want.Detail, got.Detail}, {"matched_rule", want.MatchedRule, got.MatchedRule}, {"deny_message", want.DenyMessage, got.DenyMessage}} {
		if f.want != nil {
			add(f.field, *f.want, f.got)
		}
	}
	return diff
}
