// Package profiles holds govhost's default coding-agent policy: one policy
// file per profile (strict.json, balanced.json, permissive.json, in this
// folder, readable as they are), the one definition that `govhost serve`
// installs on a first start, `govhost mcp` and the hooks use when nothing
// else is bound, and `govhost policy show --default` prints.
// docs/default-policy.md explains every rule.
//
// A profile file is a policy file with one placeholder: DataPlaceholder
// (the govhost data directory the agents must not touch), replaced by
// Render with the real directory.
package profiles

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"
)

//go:embed *.json
var files embed.FS

// The profiles. Balanced is the default.
const (
	Strict     = "strict"
	Balanced   = "balanced"
	Permissive = "permissive"
)

// Names lists the profiles from strictest to most permissive.
func Names() []string { return []string{Strict, Balanced, Permissive} }

// PolicyID is the policy id every profile's file carries; each profile is a
// version of it ("balanced-1", …).
var PolicyID = uuid.MustParse("6f1c2d3e-4b5a-4c6d-8e7f-000000000001")

// DataPlaceholder stands, in a profile file, for the data directory.
const DataPlaceholder = "$govhost_data"

// ErrUnknownProfile reports a profile name that is not one of Names.
var ErrUnknownProfile = errors.New("profiles: unknown profile")

// File returns a profile's file as it is in the repository.
func File(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownProfile, name, strings.Join(Names(), ", "))
	}
	return files.ReadFile(name + ".json")
}

// Render returns the policy file of a profile for a data directory: the
// placeholder replaced by dataDir made absolute (and real, when it
// exists), so the agents are denied that directory and its token files
// wherever it is. An empty name is Balanced.
func Render(name, dataDir string) ([]byte, error) {
	if name == "" {
		name = Balanced
	}
	b, err := File(name)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("profiles: data directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	quoted, err := json.Marshal(dir)
	if err != nil {
		return nil, err
	}
	// NB: the placeholder only ever appears inside a JSON string, so the
	// replacement keeps the file valid JSON.
	inner := string(quoted[1 : len(quoted)-1])
	return []byte(strings.ReplaceAll(string(b), DataPlaceholder, inner)), nil
}

// Version is the policy version of a profile's file ("balanced-1").
func Version(name string) (string, error) {
	b, err := File(name)
	if err != nil {
		return "", err
	}
	var head struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", err
	}
	return head.Version, nil
}

// ChoiceFileName is the file in the data directory where `govhost install
// --profile` records the profile a first `serve` installs.
const ChoiceFileName = "profile"

// Choose returns the profile to install: flag when set, else the one
// recorded in dataDir by Record, else Balanced.
func Choose(flag, dataDir string) (string, error) {
	if flag != "" {
		_, err := File(flag)
		return flag, err
	}
	b, err := os.ReadFile(filepath.Join(dataDir, ChoiceFileName))
	if errors.Is(err, os.ErrNotExist) {
		return Balanced, nil
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if _, err := File(name); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dataDir, ChoiceFileName), err)
	}
	return name, nil
}

// Record writes name as dataDir's chosen profile (creating dataDir, 0700).
func Record(name, dataDir string) error {
	if _, err := File(name); err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dataDir, ChoiceFileName), []byte(name+"\n"), 0o600)
}
