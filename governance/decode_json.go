package governance

import (
	"bytes"
	"encoding/json"
	"sync"
)

// DecodeJSON is json.Unmarshal(data, v) through a recycled json.Decoder:
// the same values and the same errors, without the decoder state and the
// scanner's stack json.Unmarshal allocates for every document (3 of the
// ~10 allocations of a small API body). A decoder is reused only after a
// document it read whole and alone (nothing but whitespace after it);
// any other document is handed to json.Unmarshal, which explains it.
// The values keep nothing of data or of the decoder's buffer
// (encoding/json copies every string and raw value it stores). As with
// json.Unmarshal, v holds no meaningful value after an error (after a
// document followed by more than whitespace, it holds the document's).
func DecodeJSON(data []byte, v any) error {
	doc := bytes.TrimRight(data, " \t\r\n")
	d := jsonDecoders.Get().(*reusedDecoder)
	d.src.Reset(doc)
	start := d.dec.InputOffset()
	if err := d.dec.Decode(v); err != nil || d.dec.InputOffset()-start != int64(len(doc)) {
		// NB: the decoder's state is the failed document's: it is dropped.
		return json.Unmarshal(data, v)
	}
	if len(doc) <= maxReusedDocument {
		jsonDecoders.Put(d)
	}
	return nil
}

// reusedDecoder is a json.Decoder reading from a source DecodeJSON sets
// for each document.
type reusedDecoder struct {
	src bytes.Reader
	dec *json.Decoder
}

var jsonDecoders = sync.Pool{New: func() any {
	d := &reusedDecoder{}
	d.dec = json.NewDecoder(&d.src)
	return d
}}

// maxReusedDocument bounds the buffer a recycled decoder keeps (it grows
// to the largest document it read).
const maxReusedDocument = 64 << 10

// JSONBuffer is a recycled buffer with a json.Encoder writing into it
// (the encoding side of DecodeJSON): a request or response body
// encoded without the encoder and buffer json.Marshal allocates for each.
// The bytes.Buffer is the body; Release recycles both.
type JSONBuffer struct {
	bytes.Buffer
	enc *json.Encoder
}

var jsonBuffers = sync.Pool{New: func() any {
	b := &JSONBuffer{}
	b.enc = json.NewEncoder(&b.Buffer)
	return b
}}

// GetJSONBuffer returns an empty recycled JSONBuffer whose Encode escapes
// HTML as json.Marshal does when escapeHTML is set.
func GetJSONBuffer(escapeHTML bool) *JSONBuffer {
	b := jsonBuffers.Get().(*JSONBuffer)
	b.Reset()
	b.enc.SetEscapeHTML(escapeHTML)
	return b
}

// Encode appends v's JSON and a newline (json.Encoder's).
func (b *JSONBuffer) Encode(v any) error { return b.enc.Encode(v) }

// Release recycles b (not one grown past maxReusedDocument, left to the
// collector); b and its bytes must not be used after it.
func (b *JSONBuffer) Release() {
	if b.Cap() <= maxReusedDocument {
		jsonBuffers.Put(b)
	}
}
