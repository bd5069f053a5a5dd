package certify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/checkpoint"
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

// Size limits of a bundle's files, checked before a file is read (a
// longer file is a *BundleError, exit 2 for govhost cert verify): a
// certificate is a few hundred bytes; a policy a few kilobytes per
// binding; a checkpoint three lines and at most MaxSignatures signature
// lines; a chain is read line by line, each line at most
// evidence.MaxRecordLine.
const (
	MaxCertificateBytes = 64 << 10
	MaxPolicyBytes      = 4 << 20
	MaxCheckpointBytes  = 64 << 10
	MaxChainBytes       = 1 << 30
)

// ErrTooLarge is matched by the error of a bundle file over its limit.
var ErrTooLarge = errors.New("certify: bundle file over its size limit")

// readLimited reads a whole file of at most limit bytes, refusing a
// larger one by its size before reading it (a non-regular file, such as
// a pipe, is read up to limit+1 bytes).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// ReadBundle reads a bundle's files strictly and within their size limits:
// the certificate and every chain line as governance reads them (exact
// keys, canonical forms), the policy snapshot with its digest recomputed,
// the checkpoint as a C2SP signed note (its signature is checked by
// Verify). A file that cannot be read that way is a *BundleError (a chain
// line's error keeps its line number); a well-formed policy whose stored
// digest does not recompute is not an input error but a verification
// failure, so it is reported by Verify.
func ReadBundle(p Parts) (Bundle, error) {
	var b Bundle
	data, err := readLimited(p.Certificate, MaxCertificateBytes)
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
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxChainBytes {
		return Bundle{}, &BundleError{File: p.Chain, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, st.Size(), int64(MaxChainBytes))}
	}
	lr := &io.LimitedReader{R: f, N: MaxChainBytes + 1}
	if err := evidence.ReadJSONL(lr, func(r governance.EvidenceRecord) bool {
		b.Records = append(b.Records, r)
		return true
	}); err != nil && lr.N > 0 {
		return Bundle{}, &BundleError{File: p.Chain, Err: err}
	}
	if lr.N <= 0 {
		return Bundle{}, &BundleError{File: p.Chain, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, int64(MaxChainBytes))}
	}
	if p.Policy != "" {
		data, err := readLimited(p.Policy, MaxPolicyBytes)
		if err != nil {
			return Bundle{}, &BundleError{File: p.Policy, Err: err}
		}
		var snap governance.PolicySnapshot
		if err := snap.UnmarshalJSON(bytes.TrimRight(data, "\r\n")); err != nil {
			var de *governance.PolicyDigestError
			if !errors.As(err, &de) {
				return Bundle{}, &BundleError{File: p.Policy, Err: err}
			}
			b.policyProblem = err.Error()
		} else {
			b.Policy = &snap
		}
	}
	if p.Checkpoint != "" {
		if b.Checkpoint, err = readLimited(p.Checkpoint, MaxCheckpointBytes); err != nil {
			return Bundle{}, &BundleError{File: p.Checkpoint, Err: err}
		}
		if _, err := checkpoint.Open(b.Checkpoint, nil); err != nil {
			return Bundle{}, &BundleError{File: p.Checkpoint, Err: err}
		}
	}
	return b, nil
}
