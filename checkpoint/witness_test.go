package checkpoint_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/checkpoint"
)

// TestWitness_Add: the witness's answers, with a proof function that
// accepts only the proof "ok": first checkpoint (proved from sequence 0), extension,
// idempotent repeat, stale old size (409 with its size), fork of the same
// size (409), rollback (400), bad proof (422), unknown key (403), other
// origin (404), malformed body (400). Its cosignature verifies with its
// verifier key and not with another witness's.
func TestWitness_Add(t *testing.T) {
	dir := t.TempDir()
	kr, err := checkpoint.OpenKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	signer, err := kr.Signer()
	require.NoError(t, err)
	vkey, err := kr.VerifierKey()
	require.NoError(t, err)
	other, err := checkpoint.OpenKeyring(filepath.Join(dir, "other"))
	require.NoError(t, err)
	otherSigner, err := other.Signer()
	require.NoError(t, err)
	key, err := checkpoint.OpenWitnessKey(filepath.Join(dir, "w"), "w1")
	require.NoError(t, err)
	w, err := checkpoint.NewWitness(filepath.Join(dir, "w"), key, []string{vkey}, func(_ string, _ int64, _ string, _ int64, _ string, proof [][]byte) error {
		if len(proof) == 1 && string(proof[0]) == "ok" {
			return nil
		}
		return errors.New("no")
	})
	require.NoError(t, err)
	chain := uuid.New()
	head := func(c byte) string { return strings.Repeat(string(c), 64) }
	note := func(size int64, h string) []byte {
		n, err := checkpoint.Sign(checkpoint.For(chain, size, h), signer)
		require.NoError(t, err)
		return n
	}
	ok := [][]byte{[]byte("ok")}
	status := func(err error) int {
		var we *checkpoint.WitnessError
		require.ErrorAs(t, err, &we)
		return we.Status
	}

	_, err = w.Add(checkpoint.AddCheckpointBody(0, nil, note(3, head('a'))))
	require.Equal(t, http.StatusUnprocessableEntity, status(err), "a first checkpoint is proved from sequence 0 too")
	cosig, err := w.Add(checkpoint.AddCheckpointBody(0, ok, note(3, head('a'))))
	require.NoError(t, err)
	signed := append(note(3, head('a')), cosig...)
	got, err := checkpoint.Cosigned(signed, []string{key.VerifierKey()})
	require.NoError(t, err)
	require.Equal(t, []string{key.VerifierKey()}, got)
	stranger, err := checkpoint.OpenWitnessKey(filepath.Join(dir, "w2"), "w2")
	require.NoError(t, err)
	got, err = checkpoint.Cosigned(signed, []string{stranger.VerifierKey()})
	require.NoError(t, err)
	require.Empty(t, got)

	_, err = w.Add(checkpoint.AddCheckpointBody(3, ok, note(5, head('b'))))
	require.NoError(t, err, "an extension with a proof")
	_, err = w.Add(checkpoint.AddCheckpointBody(5, nil, note(5, head('b'))))
	require.NoError(t, err, "the same checkpoint again")

	_, err = w.Add(checkpoint.AddCheckpointBody(3, ok, note(6, head('c'))))
	require.Equal(t, http.StatusConflict, status(err))
	var we *checkpoint.WitnessError
	require.ErrorAs(t, err, &we)
	require.EqualValues(t, 5, we.Size)
	_, err = w.Add(checkpoint.AddCheckpointBody(5, nil, note(5, head('d'))))
	require.Equal(t, http.StatusConflict, status(err), "a fork of the same size")
	_, err = w.Add(checkpoint.AddCheckpointBody(5, nil, note(4, head('a'))))
	require.Equal(t, http.StatusBadRequest, status(err), "a rollback")
	_, err = w.Add(checkpoint.AddCheckpointBody(5, [][]byte{[]byte("forged")}, note(7, head('e'))))
	require.Equal(t, http.StatusUnprocessableEntity, status(err), "a proof that does not verify")
	n, err := checkpoint.Sign(checkpoint.For(chain, 9, head('f')), otherSigner)
	require.NoError(t, err)
	_, err = w.Add(checkpoint.AddCheckpointBody(5, ok, n))
	require.Equal(t, http.StatusForbidden, status(err))
	foreign, err := checkpoint.Sign(checkpoint.Checkpoint{Origin: "example.com/log", Size: 1, Head: head('a')}, signer)
	require.NoError(t, err)
	_, err = w.Add(checkpoint.AddCheckpointBody(0, nil, foreign))
	require.Equal(t, http.StatusNotFound, status(err))
	_, err = w.Add([]byte("new 5\n\n"))
	require.Equal(t, http.StatusBadRequest, status(err))

	// The state survives a restart: a new witness on the same folder holds size 5.
	again, err := checkpoint.NewWitness(filepath.Join(dir, "w"), key, []string{vkey}, nil)
	require.NoError(t, err)
	_, err = again.Add(checkpoint.AddCheckpointBody(0, nil, note(5, head('b'))))
	require.Equal(t, http.StatusConflict, status(err))
}
