package checkpoint

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/note"
)

// ErrMalformed is matched by every error about a checkpoint's text.
var ErrMalformed = errors.New("checkpoint: malformed checkpoint")

// ErrUnknownKey: no trusted key signed the checkpoint (it may be signed by
// another key).
var ErrUnknownKey = errors.New("checkpoint: not signed by a trusted key")

// ErrBadSignature: a trusted key's signature on the checkpoint does not
// verify (the text was changed).
var ErrBadSignature = errors.New("checkpoint: signature does not verify")

// Checkpoint commits to a chain's first Size records ending at Head.
type Checkpoint struct {
	Origin string
	Size   int64
	Head   string
}

// OriginPrefix starts every chain's origin line.
const OriginPrefix = "govhost/chain/"

// Origin is the origin line of a chain's checkpoints.
func Origin(chain uuid.UUID) string { return OriginPrefix + chain.String() }

// For returns the checkpoint of a chain of size records ending at head.
func For(chain uuid.UUID, size int64, head string) Checkpoint {
	return Checkpoint{Origin: Origin(chain), Size: size, Head: head}
}

// Text returns the note text: origin, size and head, one line each.
func (c Checkpoint) Text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + c.Head + "\n"
}

// Chain returns the chain the origin names.
func (c Checkpoint) Chain() (uuid.UUID, bool) {
	s, ok := strings.CutPrefix(c.Origin, OriginPrefix)
	if !ok || len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil && id.String() == s
}

// ParseText reads a checkpoint's text exactly: three lines, a canonical
// positive decimal size, a 64-lowercase-hex head.
func ParseText(text string) (Checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, fmt.Errorf("%w: want three lines (origin, size, head), got %q", ErrMalformed, text)
	}
	c := Checkpoint{Origin: lines[0], Head: lines[2]}
	if c.Origin == "" || strings.ContainsAny(c.Origin, " \t+") {
		return Checkpoint{}, fmt.Errorf("%w: bad origin line %q", ErrMalformed, c.Origin)
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("%w: size %q is not a positive decimal integer", ErrMalformed, lines[1])
	}
	c.Size = n
	if !isDigest(c.Head) {
		return Checkpoint{}, fmt.Errorf("%w: head %q is not 64 lowercase hex", ErrMalformed, c.Head)
	}
	return c, nil
}

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Sign returns the signed note of c.
func Sign(c Checkpoint, signer note.Signer) ([]byte, error) {
	if _, err := ParseText(c.Text()); err != nil {
		return nil, err
	}
	return note.Sign(&note.Note{Text: c.Text()}, signer)
}

// Signed is a checkpoint read from a signed note.
type Signed struct {
	Checkpoint
	// Note is the note as given.
	Note []byte
	// Key names the trusted key that verified it ("name+hash"); "" when
	// unauthenticated.
	Key string
	// Signers lists "name+hash" (hash as 8 hex digits) of every signature
	// line, in order.
	Signers []string
}

// Authenticated reports whether a trusted key verified the checkpoint.
func (s Signed) Authenticated() bool { return s.Key != "" }

// CheckVerifierKey says whether vkey is a verifier key text
// ("name+hash+base64", as Keyring.VerifierKey prints it).
func CheckVerifierKey(vkey string) error {
	if _, err := note.NewVerifier(vkey); err != nil {
		return fmt.Errorf("checkpoint: verifier key %q: %w", vkey, err)
	}
	return nil
}

// Open reads a signed checkpoint. With trusted verifier keys (vkeys, as
// Keyring.VerifierKey prints them) it requires a valid signature by one of
// them: ErrUnknownKey when none signed it, ErrBadSignature when a trusted
// key's signature does not verify. With no keys it reads the text
// unauthenticated (Key ""), checking only the note's form.
func Open(msg []byte, vkeys []string) (Signed, error) {
	text, sigs, err := split(msg)
	if err != nil {
		return Signed{}, err
	}
	cp, err := ParseText(text)
	if err != nil {
		return Signed{}, err
	}
	out := Signed{Checkpoint: cp, Note: msg, Signers: sigs}
	if len(vkeys) == 0 {
		return out, nil
	}
	var verifiers []note.Verifier
	for _, k := range vkeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return Signed{}, fmt.Errorf("checkpoint: verifier key %q: %w", k, err)
		}
		verifiers = append(verifiers, v)
	}
	n, err := note.Open(msg, note.VerifierList(verifiers...))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return Signed{}, fmt.Errorf("%w (signed by %s)", ErrUnknownKey, strings.Join(sigs, ", "))
	case errors.As(err, &invalid):
		return Signed{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	case err != nil:
		return Signed{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out.Key = n.Sigs[0].Name + "+" + fmt.Sprintf("%08x", n.Sigs[0].Hash)
	return out, nil
}

// MaxSignatures bounds the signature lines of a note govhost reads (the
// signer's and its witnesses' cosignatures); a note with more is refused
// before any is checked, as golang.org/x/mod/sumdb/note also refuses.
const MaxSignatures = 100

// split returns a note's text and its signers ("name+hash"), checking the
// C2SP signed-note form whether or not a key will be checked: UTF-8 text
// without control characters other than newline, ending in a newline; one
// empty line; one or more signature lines "— <name> <base64>\n" where the
// name is nonempty without spaces or '+', and the base64 is standard,
// padded, and decodes to a 4-byte key hash and a nonempty signature.
func split(msg []byte) (string, []string, error) {
	s := string(msg)
	if !utf8.ValidString(s) {
		return "", nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' || c == 0x7f {
			return "", nil, fmt.Errorf("%w: control character 0x%02x at byte %d", ErrMalformed, c, i)
		}
	}
	i := strings.LastIndex(s, "\n\n")
	if i < 0 || !strings.HasSuffix(s, "\n") {
		return "", nil, fmt.Errorf("%w: not a signed note (text, an empty line, signature lines)", ErrMalformed)
	}
	text := s[:i+1]
	lines := strings.Split(strings.TrimSuffix(s[i+2:], "\n"), "\n")
	if len(lines) > MaxSignatures {
		return "", nil, fmt.Errorf("%w: %d signature lines, at most %d are read", ErrMalformed, len(lines), MaxSignatures)
	}
	var signers []string
	for n, line := range lines {
		name, hash, err := signatureLine(line)
		if err != nil {
			return "", nil, fmt.Errorf("%w: signature line %d %q: %v", ErrMalformed, n+1, line, err)
		}
		signers = append(signers, fmt.Sprintf("%s+%08x", name, hash))
	}
	return text, signers, nil
}

// signatureLine reads one "— name base64" line.
func signatureLine(line string) (string, uint32, error) {
	rest, ok := strings.CutPrefix(line, "— ")
	if !ok {
		return "", 0, errors.New("does not start with an em dash and a space")
	}
	name, sig, ok := strings.Cut(rest, " ")
	if !ok || name == "" || sig == "" {
		return "", 0, errors.New("want a key name, one space, a base64 signature")
	}
	if strings.ContainsRune(name, '+') || strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return "", 0, errors.New("the key name has a space or '+'")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(sig)
	if err != nil || base64.StdEncoding.EncodeToString(raw) != sig {
		return "", 0, errors.New("the signature is not standard padded base64")
	}
	if len(raw) < 5 {
		return "", 0, errors.New("the signature is shorter than a key hash and one byte")
	}
	return name, binary.BigEndian.Uint32(raw[:4]), nil
}
