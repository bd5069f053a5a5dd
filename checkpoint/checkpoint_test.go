package checkpoint_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/governance"
)

func TestKeyring_SignOpenRotate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	kr, err := checkpoint.OpenKeyring(dir)
	require.NoError(t, err)
	info, err := os.Stat(filepath.Join(dir, "signing.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the private key is for the owner only")
	vkey, err := kr.VerifierKey()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(vkey, "govhost-"), vkey)
	require.NotContains(t, vkey, "PRIVATE")

	cp := checkpoint.For(uuid.New(), 7, governance.SHA256Hex([]byte("head")))
	signer, err := kr.Signer()
	require.NoError(t, err)
	note, err := checkpoint.Sign(cp, signer)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(note), cp.Text()+"\n— govhost-"), string(note))

	got, err := checkpoint.Open(note, []string{vkey})
	require.NoError(t, err)
	require.True(t, got.Authenticated())
	require.Equal(t, cp, got.Checkpoint)

	unauth, err := checkpoint.Open(note, nil)
	require.NoError(t, err)
	require.False(t, unauth.Authenticated())
	require.Equal(t, cp, unauth.Checkpoint)

	// Another key: not trusted.
	other, err := checkpoint.OpenKeyring(filepath.Join(t.TempDir(), "other"))
	require.NoError(t, err)
	otherKey, _ := other.VerifierKey()
	_, err = checkpoint.Open(note, []string{otherKey})
	require.ErrorIs(t, err, checkpoint.ErrUnknownKey)

	// An edited text under a trusted key's signature.
	edited := bytes.Replace(note, []byte("\n7\n"), []byte("\n8\n"), 1)
	_, err = checkpoint.Open(edited, []string{vkey})
	require.ErrorIs(t, err, checkpoint.ErrBadSignature)

	// Rotation: the new key signs from now on; the old note verifies with
	// the old key only, the new one with the new key only.
	newKey, err := kr.Rotate()
	require.NoError(t, err)
	require.NotEqual(t, vkey, newKey)
	signer, err = kr.Signer()
	require.NoError(t, err)
	note2, err := checkpoint.Sign(cp, signer)
	require.NoError(t, err)
	_, err = checkpoint.Open(note, []string{vkey})
	require.NoError(t, err)
	_, err = checkpoint.Open(note, []string{newKey})
	require.ErrorIs(t, err, checkpoint.ErrUnknownKey)
	_, err = checkpoint.Open(note2, []string{vkey})
	require.ErrorIs(t, err, checkpoint.ErrUnknownKey)
	_, err = checkpoint.Open(note2, []string{newKey})
	require.NoError(t, err)
	keys, err := kr.VerifierKeys()
	require.NoError(t, err)
	require.Equal(t, []string{newKey, vkey}, keys)
	// Reopening keeps the current key.
	again, err := checkpoint.OpenKeyring(dir)
	require.NoError(t, err)
	k, _ := again.VerifierKey()
	require.Equal(t, newKey, k)

	// A private key others can read is refused.
	require.NoError(t, os.Chmod(filepath.Join(dir, "signing.key"), 0o644))
	_, err = again.Signer()
	require.Error(t, err)
}

func TestParseText_Refuses(t *testing.T) {
	head := governance.SHA256Hex(nil)
	for name, text := range map[string]string{
		"two lines":     "govhost/chain/x\n1\n",
		"zero size":     "o\n0\n" + head + "\n",
		"leading zero":  "o\n01\n" + head + "\n",
		"upper head":    "o\n1\n" + strings.ToUpper(head) + "\n",
		"space origin":  "o o\n1\n" + head + "\n",
		"no final line": "o\n1\n" + head,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := checkpoint.ParseText(text)
			require.ErrorIs(t, err, checkpoint.ErrMalformed)
		})
	}
}

func TestLog_FileAndDirectory(t *testing.T) {
	kr, err := checkpoint.OpenKeyring(filepath.Join(t.TempDir(), "keys"))
	require.NoError(t, err)
	signer, _ := kr.Signer()
	chain := uuid.New()
	var notes [][]byte
	for i := int64(1); i <= 3; i++ {
		n, err := checkpoint.Sign(checkpoint.For(chain, i, governance.SHA256Hex([]byte{byte(i)})), signer)
		require.NoError(t, err)
		notes = append(notes, n)
	}
	file := filepath.Join(t.TempDir(), "checkpoints.log")
	dir := t.TempDir()
	for _, n := range notes {
		require.NoError(t, checkpoint.Append(file, n))
		require.NoError(t, checkpoint.Append(dir, n))
	}
	for _, path := range []string{file, dir} {
		got, err := checkpoint.ReadLog(path)
		require.NoError(t, err)
		require.Equal(t, notes, got)
	}
	// A directory refuses a second head for the same size: a fork.
	forked, err := checkpoint.Sign(checkpoint.For(chain, 2, governance.SHA256Hex([]byte("fork"))), signer)
	require.NoError(t, err)
	require.Error(t, checkpoint.Append(dir, forked))
	// A truncated log file is an error, not fewer checkpoints.
	b, _ := os.ReadFile(file)
	require.NoError(t, os.WriteFile(file, b[:len(b)-40], 0o644))
	_, err = checkpoint.ReadLog(file)
	require.Error(t, err)
}
