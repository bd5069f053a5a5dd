package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The witness side of C2SP tlog-witness, for govhost's hash chains. A
// witness holds its own key and, per origin (chain), the latest size and
// head it cosigned. It cosigns a checkpoint only when the log's key signed
// it and it extends what the witness cosigned before: the request names
// the old size the client believes the witness holds and carries the
// consistency proof from there. govhost's logs are hash chains, not Merkle
// trees, so the proof is the chain's records from the old size up to the
// new one (one record a line, govhost chain export's format): the witness
// re-derives every chain hash from the old head to the new head.
//
// POST /add-checkpoint, body:
//
//	old <size>\n
//	<proof line>\n ...         (the records old .. size-1; none when old equals size)
//	\n
//	<the signed checkpoint note>
//
// Answers (as tlog-witness): 200 with the cosignature line(s); 409 with
// the witness's latest size for the origin (Content-Type
// text/x.tlog.size) when old is not it, or when the checkpoint has that
// size and another head (a fork); 422 when the proof does not lead from
// the old head to the new one (a fork); 400 when old is larger than the
// checkpoint's size (a rollback) or the body is malformed; 403 when no
// trusted log key signed the checkpoint; 404 for an origin outside the
// witness's prefix.

// Proof checks a consistency proof: that proof (the records of the chain
// origin from oldSize to size) leads from oldHead to head. certify.Consistency
// is govhost's.
type Proof func(origin string, oldSize int64, oldHead string, size int64, head string, proof [][]byte) error

// Witness cosigns checkpoints that extend what it cosigned before.
type Witness struct {
	Key WitnessKey
	// LogKeys are the log verifier keys whose checkpoints it cosigns.
	LogKeys []string
	// OriginPrefix limits the origins it witnesses (default OriginPrefix).
	OriginPrefix string
	Proof        Proof
	// Now is the cosignature time (default time.Now).
	Now func() time.Time

	dir string
	mu  sync.Mutex
}

// witnessState is the witness's state file: per origin the latest size
// and head it cosigned.
type witnessState map[string]struct {
	Size int64  `json:"size"`
	Head string `json:"head"`
}

// NewWitness returns a witness keeping its state in dir/state.json.
func NewWitness(dir string, key WitnessKey, logKeys []string, proof Proof) (*Witness, error) {
	for _, k := range logKeys {
		if err := CheckVerifierKey(k); err != nil {
			return nil, err
		}
	}
	if len(logKeys) == 0 {
		return nil, errors.New("checkpoint: a witness needs at least one log key")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Witness{Key: key, LogKeys: logKeys, OriginPrefix: OriginPrefix, Proof: proof, Now: time.Now, dir: dir}, nil
}

// WitnessError is a refusal with its HTTP status (and, for 409, the
// witness's latest size).
type WitnessError struct {
	Status int
	Size   int64
	Reason string
}

func (e *WitnessError) Error() string {
	return fmt.Sprintf("checkpoint: witness refused (%d %s): %s", e.Status, http.StatusText(e.Status), e.Reason)
}

func (w *Witness) load() (witnessState, error) {
	st := witnessState{}
	b, err := os.ReadFile(filepath.Join(w.dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	return st, json.Unmarshal(b, &st)
}

// save writes the state durably before a cosignature leaves the witness.
func (w *Witness) save(st witnessState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(w.dir, "state.json.tmp")
	if err := writeSynced(tmp, b, os.O_WRONLY|os.O_CREATE|os.O_TRUNC); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(w.dir, "state.json"))
}

// Add handles one add-checkpoint request body and returns the cosignature
// line, or a *WitnessError.
func (w *Witness) Add(body []byte) ([]byte, error) {
	bad := func(status int, format string, a ...any) error {
		return &WitnessError{Status: status, Reason: fmt.Sprintf(format, a...)}
	}
	first, rest, ok := bytes.Cut(body, []byte("\n"))
	oldText, isOld := strings.CutPrefix(string(first), "old ")
	old, err := strconv.ParseInt(oldText, 10, 64)
	if !ok || !isOld || err != nil || old < 0 || strconv.FormatInt(old, 10) != oldText {
		return nil, bad(http.StatusBadRequest, "the body does not start with \"old <size>\"")
	}
	var proof [][]byte
	for {
		line, more, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, bad(http.StatusBadRequest, "no empty line before the checkpoint")
		}
		rest = more
		if len(line) == 0 {
			break
		}
		proof = append(proof, line)
	}
	s, err := Open(rest, w.LogKeys)
	switch {
	case errors.Is(err, ErrMalformed):
		return nil, bad(http.StatusBadRequest, "%v", err)
	case err != nil:
		return nil, bad(http.StatusForbidden, "%v", err)
	case !strings.HasPrefix(s.Origin, w.OriginPrefix):
		return nil, bad(http.StatusNotFound, "unknown origin %q", s.Origin)
	case old > s.Size:
		return nil, bad(http.StatusBadRequest, "old size %d is larger than the checkpoint's %d: a rollback", old, s.Size)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st, err := w.load()
	if err != nil {
		return nil, err
	}
	latest := st[s.Origin]
	if old != latest.Size {
		return nil, &WitnessError{Status: http.StatusConflict, Size: latest.Size, Reason: fmt.Sprintf("the witness holds size %d of %s, not %d", latest.Size, s.Origin, old)}
	}
	if old == s.Size && s.Head != latest.Head {
		return nil, &WitnessError{Status: http.StatusConflict, Size: latest.Size, Reason: fmt.Sprintf("size %d of %s has another head than the one cosigned: a fork", old, s.Origin)}
	}
	if old < s.Size {
		if err := w.Proof(s.Origin, old, latest.Head, s.Size, s.Head, proof); err != nil {
			return nil, bad(http.StatusUnprocessableEntity, "the consistency proof does not verify: %v", err)
		}
	} else if len(proof) > 0 {
		return nil, bad(http.StatusBadRequest, "a proof for a checkpoint of the size the witness holds")
	}
	latest.Size, latest.Head = s.Size, s.Head
	st[s.Origin] = latest
	if err := w.save(st); err != nil {
		return nil, err
	}
	return []byte(w.Key.Cosign(s.Text(), w.Now())), nil
}

// MaxAddCheckpointBytes bounds an add-checkpoint request body.
const MaxAddCheckpointBytes = 256 << 20

// Handler serves POST /add-checkpoint.
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxAddCheckpointBytes))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		cosig, err := w.Add(body)
		var we *WitnessError
		switch {
		case errors.As(err, &we) && we.Status == http.StatusConflict:
			rw.Header().Set("Content-Type", "text/x.tlog.size")
			rw.WriteHeader(http.StatusConflict)
			fmt.Fprintf(rw, "%d\n", we.Size)
		case errors.As(err, &we):
			http.Error(rw, we.Reason, we.Status)
		case err != nil:
			http.Error(rw, err.Error(), http.StatusInternalServerError)
		default:
			rw.Write(cosig)
		}
	})
	return mux
}

// AddCheckpointBody returns the request body for a checkpoint note and the
// proof lines from old.
func AddCheckpointBody(old int64, proof [][]byte, note []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, p := range proof {
		b.Write(p)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(note)
	return b.Bytes()
}

// Submit asks the witness at url to cosign note. proofFrom returns the
// proof lines from an old size; Submit first claims old size 0 and, when
// the witness answers 409 with its size, retries once from that size. It
// returns the cosignature line(s) or a *WitnessError.
func Submit(ctx context.Context, client *http.Client, url string, note []byte, proofFrom func(old int64) ([][]byte, error)) ([]byte, error) {
	old := int64(0)
	for attempt := 0; ; attempt++ {
		proof, err := proofFrom(old)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/add-checkpoint", bytes.NewReader(AddCheckpointBody(old, proof, note)))
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxNoteBytes))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			if _, _, err := split(append([]byte("x\n\n"), body...)); err != nil {
				return nil, fmt.Errorf("checkpoint: the witness answered no cosignature line: %w", err)
			}
			return body, nil
		}
		werr := &WitnessError{Status: resp.StatusCode, Reason: strings.TrimSpace(string(body))}
		if resp.StatusCode == http.StatusConflict && resp.Header.Get("Content-Type") == "text/x.tlog.size" {
			n, perr := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
			if perr == nil && n >= 0 {
				werr.Size = n
				if attempt == 0 && n != old {
					old = n
					continue
				}
			}
		}
		return nil, werr
	}
}
