package evidence

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/govhost/govhost/governance"
)

// MaxRecordLine bounds one line of a chain file; a longer line is refused
// rather than buffered without limit.
const MaxRecordLine = 1 << 20

// ErrChainFile is matched by every *LineError.
var ErrChainFile = errors.New("evidence: malformed chain file")

// LineError locates a malformed line of a chain file (1-based).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("evidence: chain file line %d: %v", e.Line, e.Err)
}
func (e *LineError) Unwrap() error { return e.Err }
func (e *LineError) Is(target error) bool {
	return target == ErrChainFile
}

// ReadJSONL reads a chain exported as JSON Lines, one EvidenceRecord a
// line in stored order (the format of the reference chain.jsonl), and calls
// fn for each record until fn returns false. Blank lines are skipped. Each
// line is read strictly (governance.ParseRecordJSON: exact keys, no
// duplicates, every field present, canonical ids, times and payloads), so
// the records verified are the ones every other JSON reader sees. A line
// that is not such a record — including a truncated last line — stops
// reading with a *LineError whose Err names the field.
func ReadJSONL(r io.Reader, fn func(governance.EvidenceRecord) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		text, err := readLine(br)
		if err == io.EOF && len(text) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return &LineError{Line: line, Err: err}
		}
		if len(bytes.TrimSpace(text)) > 0 {
			rec, perr := governance.ParseRecordJSON(text)
			if perr != nil {
				return &LineError{Line: line, Err: perr}
			}
			if !fn(rec) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine returns one line without its newline, refusing lines longer than
// MaxRecordLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxRecordLine {
			return nil, fmt.Errorf("line longer than %d bytes", MaxRecordLine)
		}
		switch err {
		case nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case bufio.ErrBufferFull:
			continue
		default:
			return line, err
		}
	}
}

// VerifyJSONL verifies a chain file against a trusted expected head with
// bounded memory. A malformed line is an error (input), not a verification
// result.
func VerifyJSONL(r io.Reader, expectedHead string) (governance.VerificationResult, error) {
	v := NewVerifier()
	if err := ReadJSONL(r, v.Add); err != nil {
		return governance.VerificationResult{}, err
	}
	return v.Result(expectedHead), nil
}

// WriteJSONL writes records as JSON Lines, one record a line in the order
// given: the format ReadJSONL and VerifyJSONL read.
func WriteJSONL(w io.Writer, records []governance.EvidenceRecord) error {
	bw := bufio.NewWriter(w)
	for _, r := range records {
		line, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		bw.Write(line)
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}
