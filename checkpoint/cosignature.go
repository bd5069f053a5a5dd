package checkpoint

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Witness cosignatures, as C2SP tlog-cosignature defines cosignature/v1:
// an Ed25519 signature by a witness key over
//
//	"cosignature/v1\ntime <unix seconds>\n" + the checkpoint's note text
//
// carried as a signed-note signature line "— <name> <base64>" whose bytes
// are the 4-byte key hash, the timestamp (8 bytes, big endian) and the
// 64-byte signature. The key hash is the first 4 bytes of
// SHA-256(name || "\n" || 0x04 || public key); a witness's verifier key
// is written "<name>+<key hash hex>+<base64(0x04 || public key)>".

// cosignatureAlg is the signed-note key type of cosignature/v1.
const cosignatureAlg = 0x04

// ErrWitnessKey is matched by every error about a witness key's text.
var ErrWitnessKey = errors.New("checkpoint: malformed witness key")

// WitnessKey is a witness's signing key.
type WitnessKey struct {
	Name string
	priv ed25519.PrivateKey
}

func witnessKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{cosignatureAlg})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil)[:4])
}

// VerifierKey returns the key's verifier key text.
func (k WitnessKey) VerifierKey() string {
	pub := k.priv.Public().(ed25519.PublicKey)
	return fmt.Sprintf("%s+%08x+%s", k.Name, witnessKeyHash(k.Name, pub), base64.StdEncoding.EncodeToString(append([]byte{cosignatureAlg}, pub...)))
}

// Cosign returns the cosignature line ("— name base64\n") of a signed
// checkpoint's note text, made at t.
func (k WitnessKey) Cosign(text string, t time.Time) string {
	ts := uint64(t.Unix())
	sig := ed25519.Sign(k.priv, cosignedMessage(text, ts))
	pub := k.priv.Public().(ed25519.PublicKey)
	raw := make([]byte, 0, 4+8+len(sig))
	raw = binary.BigEndian.AppendUint32(raw, witnessKeyHash(k.Name, pub))
	raw = binary.BigEndian.AppendUint64(raw, ts)
	raw = append(raw, sig...)
	return "\u2014 " + k.Name + " " + base64.StdEncoding.EncodeToString(raw) + "\n"
}

func cosignedMessage(text string, ts uint64) []byte {
	return []byte("cosignature/v1\ntime " + strconv.FormatUint(ts, 10) + "\n" + text)
}

// OpenWitnessKey opens the witness key in dir (witness.key, mode 0600),
// creating one named name when there is none.
func OpenWitnessKey(dir, name string) (WitnessKey, error) {
	path := filepath.Join(dir, "witness.key")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if name == "" || strings.ContainsAny(name, "+ \t\n") {
			return WitnessKey{}, fmt.Errorf("%w: name %q", ErrWitnessKey, name)
		}
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return WitnessKey{}, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return WitnessKey{}, err
		}
		text := name + " " + hex.EncodeToString(priv.Seed()) + "\n"
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return WitnessKey{}, err
		}
		return WitnessKey{Name: name, priv: priv}, nil
	}
	if err != nil {
		return WitnessKey{}, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return WitnessKey{}, fmt.Errorf("checkpoint: %s is readable by others (mode %v): refusing to sign with it", path, st.Mode().Perm())
	}
	n, seedHex, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	seed, err := hex.DecodeString(seedHex)
	if !ok || err != nil || len(seed) != ed25519.SeedSize {
		return WitnessKey{}, fmt.Errorf("%w: %s", ErrWitnessKey, path)
	}
	return WitnessKey{Name: n, priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// witnessVerifier is a parsed witness verifier key.
type witnessVerifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

func parseWitnessKey(vkey string) (witnessVerifier, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return witnessVerifier{}, fmt.Errorf("%w: %q is not name+hash+key", ErrWitnessKey, vkey)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != cosignatureAlg {
		return witnessVerifier{}, fmt.Errorf("%w: %q is not a cosignature/v1 key", ErrWitnessKey, vkey)
	}
	v := witnessVerifier{name: parts[0], pub: ed25519.PublicKey(raw[1:])}
	v.hash = witnessKeyHash(v.name, v.pub)
	if fmt.Sprintf("%08x", v.hash) != parts[1] {
		return witnessVerifier{}, fmt.Errorf("%w: %q: the key hash does not match the key", ErrWitnessKey, vkey)
	}
	return v, nil
}

// CheckWitnessKey says whether vkey is a witness verifier key text.
func CheckWitnessKey(vkey string) error {
	_, err := parseWitnessKey(vkey)
	return err
}

// Cosigned returns the witness keys (of vkeys) whose valid cosignature the
// signed note msg carries, each once. Signature lines of other keys are
// ignored; a line of a given witness key that does not verify is an error.
func Cosigned(msg []byte, vkeys []string) ([]string, error) {
	text, _, err := split(msg)
	if err != nil {
		return nil, err
	}
	var ws []witnessVerifier
	for _, k := range vkeys {
		v, err := parseWitnessKey(k)
		if err != nil {
			return nil, err
		}
		ws = append(ws, v)
	}
	s := string(msg)
	sigs := strings.Split(strings.TrimSuffix(s[len(text)+1:], "\n"), "\n")
	seen := map[string]bool{}
	var out []string
	for _, line := range sigs {
		name, hash, _ := signatureLine(line) // split checked every line
		for i, w := range ws {
			if w.name != name || w.hash != hash {
				continue
			}
			raw, _ := base64.StdEncoding.DecodeString(line[strings.LastIndex(line, " ")+1:])
			if len(raw) != 4+8+ed25519.SignatureSize || !ed25519.Verify(w.pub, cosignedMessage(text, binary.BigEndian.Uint64(raw[4:12])), raw[12:]) {
				return nil, fmt.Errorf("%w: cosignature of witness %s does not verify", ErrBadSignature, name)
			}
			if !seen[vkeys[i]] {
				seen[vkeys[i]] = true
				out = append(out, vkeys[i])
			}
		}
	}
	return out, nil
}
