package server

import (
	"reflect"
	"testing"

	"github.com/govhost/govhost/api"
)

// BenchmarkCheckStrict_AuthorizeBody: the strict pass of decode over an
// authorize body (shape of api.AuthorizeRequest), without the HTTP around it.
func BenchmarkCheckStrict_AuthorizeBody(b *testing.B) {
	body := []byte(`{"tool":"reader","operation":"read_file","arguments":{"path":"notes.md","n":[1,2,{"deep":"\u00e9\ud83d\ude00"}]},` +
		`"cwd":"/w","path_args":["path"],"metadata":{"k":"v"},"wait_ms":0}`)
	s := shapeOf(reflect.TypeOf(&api.AuthorizeRequest{}))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for range b.N {
		if err := checkStrict(body, s); err != nil {
			b.Fatal(err)
		}
	}
}
