package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Keyring is a data directory's checkpoint signing keys, in one folder:
//
//	signing.key          the current private key (note signer key, mode 0600)
//	signing.vkey         its verifier key, the text a verifier is given
//	retired/<hash>.vkey  verifier keys of rotated-out keys, kept so old
//	                     bundles stay verifiable; their private keys are
//	                     deleted on rotation
//
// A key's name is "govhost-" and 8 random hex digits, chosen when the
// folder's first key is created and kept across rotations; each key is
// told apart by its key hash.
type Keyring struct{ dir string }

// OpenKeyring opens the keys in dir, creating dir and a first key when
// there is none.
func OpenKeyring(dir string) (*Keyring, error) {
	k := &Keyring{dir: dir}
	if _, err := os.Stat(k.path("signing.key")); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		name, err := newName()
		if err != nil {
			return nil, err
		}
		if err := k.create(name); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if _, err := k.Signer(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keyring) path(name string) string { return filepath.Join(k.dir, name) }

func newName() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "govhost-" + hex.EncodeToString(b[:]), nil
}

// create writes a new key pair; the private key is written 0600 and
// never readable by others, even briefly.
func (k *Keyring) create(name string) error {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return err
	}
	tmp := k.path("signing.key.new")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(skey + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(k.path("signing.vkey"), []byte(vkey+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, k.path("signing.key"))
}

// Signer returns the current key's signer.
func (k *Keyring) Signer() (note.Signer, error) {
	info, err := os.Stat(k.path("signing.key"))
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("checkpoint: %s is readable by others (mode %v): refusing to sign with it", k.path("signing.key"), info.Mode().Perm())
	}
	b, err := os.ReadFile(k.path("signing.key"))
	if err != nil {
		return nil, err
	}
	return note.NewSigner(strings.TrimSpace(string(b)))
}

// VerifierKey returns the current key's verifier key
// ("name+hash+base64"), the text to give a verifier.
func (k *Keyring) VerifierKey() (string, error) {
	b, err := os.ReadFile(k.path("signing.vkey"))
	return strings.TrimSpace(string(b)), err
}

// VerifierKeys returns the current verifier key first, then every retired
// one (sorted).
func (k *Keyring) VerifierKeys() ([]string, error) {
	cur, err := k.VerifierKey()
	if err != nil {
		return nil, err
	}
	paths, _ := filepath.Glob(filepath.Join(k.dir, "retired", "*.vkey"))
	sort.Strings(paths)
	out := []string{cur}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out, nil
}

// Rotate retires the current key — its verifier key moves to retired/, its
// private key is deleted — and creates a new one under the same name. The
// new key signs from now on; checkpoints signed before stay verifiable with
// the retired verifier key.
func (k *Keyring) Rotate() (string, error) {
	old, err := k.VerifierKey()
	if err != nil {
		return "", err
	}
	v, err := note.NewVerifier(old)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(k.path("retired"), 0o700); err != nil {
		return "", err
	}
	retired := filepath.Join(k.dir, "retired", fmt.Sprintf("%08x.vkey", v.KeyHash()))
	if err := os.WriteFile(retired, []byte(old+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := k.create(v.Name()); err != nil {
		return "", err
	}
	return k.VerifierKey()
}
