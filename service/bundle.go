package service

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// WriteTaskBundle mints the certificate of a closed task and writes its
// bundle (govhost.Engine.Bundle: certificate, chain, policy snapshot,
// signed checkpoint) to w as a tar of the files `govhost cert verify`
// reads from a folder. An unknown or open task is CodeTaskNotFound; one
// the issuer refuses is CodeNotMintable. Nothing is written to w then.
func (s *Service) WriteTaskBundle(ctx context.Context, task uuid.UUID, w io.Writer) error {
	b, err := s.eng.Bundle(ctx, task)
	var ce *governance.CertificateError
	switch {
	case errors.Is(err, govhost.ErrNoTask):
		return failf(CodeTaskNotFound, "no closed task %s in the data directory (unknown, or still open)", task)
	case errors.As(err, &ce):
		return fail(CodeNotMintable, err)
	case err != nil:
		return err
	}
	cert, err := b.Certificate.MarshalJSON()
	if err != nil {
		return err
	}
	var chain bytes.Buffer
	if err := evidence.WriteJSONL(&chain, b.Records); err != nil {
		return err
	}
	type file struct {
		name string
		data []byte
	}
	files := []file{{certify.CertificateFile, append(cert, '\n')}, {certify.ChainFile, chain.Bytes()}}
	if b.Policy != nil {
		p, err := b.Policy.MarshalJSON()
		if err != nil {
			return err
		}
		files = append(files, file{certify.PolicyFile, append(p, '\n')})
	}
	if b.Checkpoint != nil {
		files = append(files, file{certify.CheckpointFile, b.Checkpoint})
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	now := time.Now()
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	_, err = w.Write(out.Bytes())
	return err
}
