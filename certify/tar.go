package certify

import (
	"archive/tar"
	"bytes"
	"io"
	"time"

	"github.com/govhost/govhost/evidence"
)

// File is one file of a bundle folder.
type File struct {
	Name string
	Data []byte
}

// Files returns the files of b's bundle folder in their fixed order
// (certificate, chain, then policy and checkpoint when present): what
// WriteBundle writes into a folder and WriteTar into an archive.
func (b Bundle) Files() ([]File, error) {
	cert, err := b.Certificate.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var chain bytes.Buffer
	if err := evidence.WriteJSONL(&chain, b.Records); err != nil {
		return nil, err
	}
	files := []File{{CertificateFile, append(cert, '\n')}, {ChainFile, chain.Bytes()}}
	if b.Policy != nil {
		p, err := b.Policy.MarshalJSON()
		if err != nil {
			return nil, err
		}
		files = append(files, File{PolicyFile, append(p, '\n')})
	}
	if b.Checkpoint != nil {
		files = append(files, File{CheckpointFile, b.Checkpoint})
	}
	return files, nil
}

// WriteTar writes b's bundle folder as a tar archive (files at the top,
// mode 0644, stamped with the certificate's mint time so one bundle is
// always the same bytes). Unpacked, it is a folder govhost cert verify
// reads.
func WriteTar(w io.Writer, b Bundle) error {
	files, err := b.Files()
	if err != nil {
		return err
	}
	stamp := b.Certificate.MintedAt
	if stamp.IsZero() {
		stamp = time.Unix(0, 0)
	}
	tw := tar.NewWriter(w)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: stamp.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	return tw.Close()
}
