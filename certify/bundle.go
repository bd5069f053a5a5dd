package certify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// A bundle is one folder holding everything a stranger needs to check a
// certificate without the data directory:
//
//	certificate.json  the TaskCertificate (times in D2's exact form)
//	chain.jsonl       the task's chain, one record a line, up to the
//	                  certificate's head (govhost chain export's format)
//	policy.json       the exact policy snapshot the task pinned
//	                  (govhost policy show's format)
//	checkpoint        the signed checkpoint of the certificate's head
//	                  (package checkpoint); absent when unsigned
const (
	CertificateFile = "certificate.json"
	ChainFile       = "chain.jsonl"
	PolicyFile      = "policy.json"
	CheckpointFile  = "checkpoint"
)

// Bundle is a certificate and its evidence.
type Bundle struct {
	Certificate governance.TaskCertificate
	Records     []governance.EvidenceRecord
	// Policy is nil when the bundle carries no policy snapshot.
	Policy *governance.PolicySnapshot
	// Checkpoint is the signed note of the certificate's head; nil when
	// the bundle is unsigned.
	Checkpoint []byte
	// policyProblem says why a policy document that was read could not be
	// used (its digest does not recompute); Verify refuses it.
	policyProblem string
}

// ErrBundle is matched by every *BundleError.
var ErrBundle = errors.New("certify: malformed bundle")

// BundleError says which file of a bundle could not be read, and why.
type BundleError struct {
	File string
	Err  error
}

func (e *BundleError) Error() string {
	return fmt.Sprintf("certify: bundle file %s: %v", e.File, e.Err)
}
func (e *BundleError) Unwrap() error        { return e.Err }
func (e *BundleError) Is(target error) bool { return target == ErrBundle }

// WriteBundle writes b into dir (created if needed; existing bundle files
// are replaced).
func WriteBundle(dir string, b Bundle) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	list, err := b.Files()
	if err != nil {
		return err
	}
	files := make(map[string][]byte, len(list))
	for _, f := range list {
		files[f.Name] = f.Data
	}
	for _, name := range []string{CertificateFile, ChainFile, PolicyFile, CheckpointFile} {
		path := filepath.Join(dir, name)
		data, ok := files[name]
		if !ok {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Parts names a bundle's files one by one; Policy and Checkpoint may be
// "" (absent).
type Parts struct {
	Certificate, Chain, Policy, Checkpoint string
}

// PartsOf returns the file names of the bundle folder dir; the optional
// files count as absent when they do not exist.
func PartsOf(dir string) Parts {
	p := Parts{Certificate: filepath.Join(dir, CertificateFile), Chain: filepath.Join(dir, ChainFile)}
	if _, err := os.Stat(filepath.Join(dir, PolicyFile)); err == nil {
		p.Policy = filepath.Join(dir, PolicyFile)
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
		p.Checkpoint = filepath.Join(dir, CheckpointFile)
	}
	return p
}

// ReadBundle reads a bundle's files strictly: the certificate and every
// chain line as governance reads them (exact keys, canonical forms), the
// policy snapshot with its digest recomputed. A file that cannot be read
// that way is a *BundleError (a chain line's error keeps its line
// number); a policy whose stored digest does not recompute is not an input
// error but a verification failure, so it is reported by Verify.
func ReadBundle(p Parts) (Bundle, error) {
	var b Bundle
	data, err := os.ReadFile(p.Certificate)
	if err != nil {
		return Bundle{}, &BundleError{File: p.Certificate, Err: err}
	}
	if err := b.Certificate.UnmarshalJSON(bytes.TrimRight(data, "\r\n")); err != nil {
		return Bundle{}, &BundleError{File: p.Certificate, Err: err}
	}
	f, err := os.Open(p.Chain)
	if err != nil {
		return Bundle{}, &BundleError{File: p.Chain, Err: err}
	}
	defer f.Close()
	if err := evidence.ReadJSONL(f, func(r governance.EvidenceRecord) bool {
		b.Records = append(b.Records, r)
		return true
	}); err != nil {
		return Bundle{}, &BundleError{File: p.Chain, Err: err}
	}
	if p.Policy != "" {
		data, err := os.ReadFile(p.Policy)
		if err != nil {
			return Bundle{}, &BundleError{File: p.Policy, Err: err}
		}
		var snap governance.PolicySnapshot
		if err := snap.UnmarshalJSON(bytes.TrimRight(data, "\r\n")); err != nil {
			var ve *governance.ValidationError
			if !errors.As(err, &ve) || ve.Field != "digest" {
				return Bundle{}, &BundleError{File: p.Policy, Err: err}
			}
			b.policyProblem = err.Error()
		} else {
			b.Policy = &snap
		}
	}
	if p.Checkpoint != "" {
		if b.Checkpoint, err = os.ReadFile(p.Checkpoint); err != nil {
			return Bundle{}, &BundleError{File: p.Checkpoint, Err: err}
		}
	}
	return b, nil
}
