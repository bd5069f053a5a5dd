package abi

import (
	"encoding/json"
	"testing"
)

func benchDoc() []byte {
	in := sampleInputs[2]
	b, _ := AppendGateInput(nil, &in)
	return b
}

func BenchmarkDecodeGateInput(b *testing.B) {
	doc := benchDoc()
	b.Run("codec=abi", func(b *testing.B) {
		var in GateInput
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for i := 0; i < b.N; i++ {
			if err := DecodeGateInput(doc, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("codec=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for i := 0; i < b.N; i++ {
			var in GateInput
			if err := json.Unmarshal(doc, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendGateInput(b *testing.B) {
	in := sampleInputs[2]
	in.Context.Metadata = nil
	buf := make([]byte, 0, 1024)
	b.Run("codec=abi", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			if buf, err = AppendGateInput(buf[:0], &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("codec=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(&in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
