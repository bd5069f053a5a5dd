package governance

import (
	"testing"
)

// The micro benchmarks of the host side's one JSON toolkit (issue 25 item
// 2): the scanner (CheckStrictJSON), the ordered-object readers
// (ParseObject, ObjectMembers), the canonical checker and the record
// escaper. docs/performance.md records their figures before and after the
// toolkit was merged into one.

var (
	benchArguments = []byte(`{"command":"go test ./... 2>&1 | tail -20","description":"Run the tests","timeout":120000,"env":{"GOFLAGS":"-count=1"},"paths":["a/b.go","c/d.go"]}`)
	benchPayload   = []byte(`{"argument_digest":"6b51d431df5d7f141cbececcf79edf3dd861c3b4069f0b11661a3eefacbba918","decision":"deny","duration_us":12,"fields":["path"],"gate_id":"pathguard","level":"hard","message":"path \"/etc/passwd\" is outside the workspace\n(resolved)","phase":"check","reason_code":"path.outside_root"}`)
	benchText      = "path \"/etc/passwd\" is outside the workspace root /home/u/project (resolved through a link)\n"
)

func BenchmarkParseObject_Arguments(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, _, err := ParseObject(benchArguments); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObjectMembers_Arguments(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := ObjectMembers(benchArguments); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckCanonical_Payload(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if err := CheckCanonical(benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEscaped_RecordText(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	buf := make([]byte, 0, 256)
	for range b.N {
		buf = appendEscaped(buf[:0], benchText)
	}
}

// benchRecordLine is a chain file's line (the Python reference's first).
const benchRecordLine = `{"record_id":"1414f6b5-06d0-42db-a02b-ff2f31bfa6af","record_type":"policy_bound","chain_id":"4ba71ab7-ac05-44a5-acc6-be1805fdf179","operation_id":null,"sequence":0,"policy_id":"0b8e90e9-f646-4d5f-9ae8-5d0928398f9f","policy_version":"2026.11.1","payload_json":"{\"decision\":\"deny\",\"gate_id\":\"pathguard\"}","payload_digest":"0000000000000000000000000000000000000000000000000000000000000000","previous_chain_hash":null,"supersedes_record_id":null,"created_at":"2026-11-20T10:00:00.000000Z","hash_algorithm":"sha256-v1","chain_hash":"0000000000000000000000000000000000000000000000000000000000000000"}`

// BenchmarkReadObject_RecordLine: the strict member split of a chain
// file's record (ParseRecordJSON's first step).
func BenchmarkReadObject_RecordLine(b *testing.B) {
	line := []byte(benchRecordLine)
	if _, err := readObject(line, "record", RecordFields); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := readObject(line, "record", RecordFields); err != nil {
			b.Fatal(err)
		}
	}
}
