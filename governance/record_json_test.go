package governance_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

// TestParseRecordJSON_RefusesRespellings: every way a line could make Go
// read one record and jq or Python another, or spell a value in a form no
// other writer produces, is refused with the field that differs.
func TestParseRecordJSON_RefusesRespellings(t *testing.T) {
	recs, lines := readChainVector(t)
	denied := recs[4] // callable_completed in the vector; the forgery below claims the opposite
	compact, err := json.Marshal(denied)
	require.NoError(t, err)
	line := string(compact)
	upper := strings.ToUpper(denied.RecordID.String())
	created := governance.FormatTime(denied.CreatedAt)
	replace := func(old, new string) string {
		require.Contains(t, line, old)
		return strings.Replace(line, old, new, 1)
	}
	cases := map[string]struct {
		in    string
		field string
	}{
		// The forgery of the issue: the exact key with a forged value and a
		// case variant with the genuine one. encoding/json keeps the last.
		"case-variant duplicate key": {replace(`"record_type":"callable_completed"`, `"record_type":"operation_denied","Record_Type":"callable_completed"`), "record.Record_Type"},
		"exact duplicate key":        {replace(`"record_type":"callable_completed"`, `"record_type":"operation_denied","record_type":"callable_completed"`), "record_type"},
		"escaped duplicate key":      {replace(`"record_type":"callable_completed"`, `"record_type":"operation_denied","record\u005ftype":"callable_completed"`), "record_type"},
		"upper-case UUID":            {replace(denied.RecordID.String(), upper), "record_id"},
		"braced UUID":                {replace(`"`+denied.RecordID.String()+`"`, `"{`+denied.RecordID.String()+`}"`), "record_id"},
		"urn UUID":                   {replace(`"`+denied.RecordID.String()+`"`, `"urn:uuid:`+denied.RecordID.String()+`"`), "record_id"},
		"undashed UUID":              {replace(denied.ChainID.String(), strings.ReplaceAll(denied.ChainID.String(), "-", "")), "chain_id"},
		"upper-case operation UUID":  {replace(denied.OperationID.UUID.String(), strings.ToUpper(denied.OperationID.UUID.String())), "operation_id"},
		"comma for dot in time":      {replace(created, strings.Replace(created, ".", ",", 1)), "created_at"},
		"offset time":                {replace(created, strings.TrimSuffix(created, "Z")+"+00:00"), "created_at"},
		"lower-case z":               {replace(created, strings.TrimSuffix(created, "Z")+"z"), "created_at"},
		"three fractional digits":    {replace(created, created[:23]+"Z"), "created_at"},
		"no fraction":                {replace(created, created[:19]+"Z"), "created_at"},
		"null field left out":        {replace(`,"supersedes_record_id":null`, ``), "supersedes_record_id"},
		"operation_id left out":      {replace(`"operation_id":"`+denied.OperationID.UUID.String()+`",`, ``), "operation_id"},
		"sequence as float":          {replace(`"sequence":4,`, `"sequence":4.0,`), "sequence"},
		"sequence with exponent":     {replace(`"sequence":4,`, `"sequence":4e0,`), "sequence"},
		"sequence as string":         {replace(`"sequence":4,`, `"sequence":"4",`), "sequence"},
		"negative zero sequence":     {strings.Replace(string(mustMarshal(t, recs[0])), `"sequence":0,`, `"sequence":-0,`, 1), "sequence"},
		"non-canonical payload":      {replace(`"payload_json":"{\"argument_digest\"`, `"payload_json":"{ \"argument_digest\"`), "payload_json"},
		"payload not an object":      {replace(`"payload_json":"`, `"payload_json":"[]`), "payload_json"},
		"upper-case digest":          {replace(denied.ChainHash, strings.ToUpper(denied.ChainHash)), "chain_hash"},
		"empty previous hash":        {replace(`"previous_chain_hash":"`+denied.PreviousChainHash+`"`, `"previous_chain_hash":""`), "previous_chain_hash"},
		"null record id":             {replace(`"record_id":"`+denied.RecordID.String()+`"`, `"record_id":null`), "record_id"},
		"trailing data":              {line + ` {}`, "record"},
		"array":                      {"[" + line + "]", "record"},
		"truncated":                  {line[:len(line)-10], "chain_hash"},
		"lone surrogate":             {replace(`"policy_version":"2026.11.1"`, `"policy_version":"2026.11.1\ud800"`), "record"},
		"invalid UTF-8":              {replace(`"policy_version":"2026.11.1"`, "\"policy_version\":\"2026.11.1\xff\""), "record"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := governance.ParseRecordJSON([]byte(c.in))
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve, "accepted %s", c.in)
			require.Equal(t, c.field, ve.Field, "%v", err)
			_, refOK := referenceRead([]byte(c.in))
			require.False(t, refOK, "the reference reader accepts what the strict reader refuses")
		})
	}
	// The reference lines, as Python wrote them (", " separators, \u
	// escapes), read unchanged.
	for i, l := range lines {
		r, err := governance.ParseRecordJSON(l)
		require.NoError(t, err)
		require.Equal(t, recs[i], r)
	}
}

func mustMarshal(t *testing.T, r governance.EvidenceRecord) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

// referenceRead is the strict reference reader the fuzz target compares
// with, written without the strict reader's code: a line is a record iff
// it decodes (as Python's json.loads would, governance.ParseJSON) to an
// object with exactly the fourteen keys, none repeated, whose record,
// written back by MarshalJSON, decodes to the same object — so every value
// is already in the one spelling govhost writes — with a canonical payload.
func referenceRead(line []byte) (governance.EvidenceRecord, bool) {
	v, err := governance.ParseJSON(line)
	if err != nil {
		return governance.EvidenceRecord{}, false
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != len(governance.RecordFields) || topLevelMembers(line) != len(m) {
		return governance.EvidenceRecord{}, false
	}
	for _, f := range governance.RecordFields {
		if _, ok := m[f]; !ok {
			return governance.EvidenceRecord{}, false
		}
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	nullUUID := func(k string) uuid.NullUUID {
		if m[k] == nil {
			return uuid.NullUUID{}
		}
		id, err := uuid.Parse(str(k))
		return uuid.NullUUID{UUID: id, Valid: err == nil}
	}
	var r governance.EvidenceRecord
	r.RecordID, _ = uuid.Parse(str("record_id"))
	r.RecordType = governance.EvidenceType(str("record_type"))
	r.ChainID, _ = uuid.Parse(str("chain_id"))
	r.OperationID = nullUUID("operation_id")
	if n, ok := m["sequence"].(json.Number); ok {
		r.Sequence, _ = strconv.ParseInt(string(n), 10, 64)
	}
	r.PolicyID, _ = uuid.Parse(str("policy_id"))
	r.PolicyVersion = str("policy_version")
	r.PayloadJSON = str("payload_json")
	r.PayloadDigest = str("payload_digest")
	r.PreviousChainHash = str("previous_chain_hash")
	r.SupersedesRecordID = nullUUID("supersedes_record_id")
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, str("created_at"))
	r.CreatedAt = r.CreatedAt.UTC()
	r.HashAlgorithm = str("hash_algorithm")
	r.ChainHash = str("chain_hash")
	if r.Validate() != nil {
		return governance.EvidenceRecord{}, false
	}
	back, err := r.MarshalJSON()
	if err != nil {
		return governance.EvidenceRecord{}, false
	}
	bv, err := governance.ParseJSON(back)
	if err != nil || !reflect.DeepEqual(bv, v) {
		return governance.EvidenceRecord{}, false
	}
	pv, err := governance.ParseJSON([]byte(r.PayloadJSON))
	if err != nil {
		return governance.EvidenceRecord{}, false
	}
	if _, isObj := pv.(map[string]any); !isObj {
		return governance.EvidenceRecord{}, false
	}
	if canon, err := governance.Canonical(pv); err != nil || !bytes.Equal(canon, []byte(r.PayloadJSON)) {
		return governance.EvidenceRecord{}, false
	}
	return r, true
}

// topLevelMembers counts the members of a JSON object as written,
// repeated keys included.
func topLevelMembers(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return -1
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return -1
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return -1
		}
		n++
	}
	return n
}

// FuzzParseRecordJSON: the strict reader accepts exactly the lines the
// reference reader accepts, and reads the same record from them.
func FuzzParseRecordJSON(f *testing.F) {
	_, lines := readChainVector(f)
	for _, l := range lines {
		f.Add(l)
		f.Add(bytes.Replace(l, []byte(`"record_type"`), []byte(`"Record_Type"`), 1))
		f.Add(bytes.Replace(l, []byte(`Z"`), []byte(`+00:00"`), 1))
		f.Add(bytes.Replace(l, []byte(`", "hash_algorithm"`), []byte(`", "record_id": null, "hash_algorithm"`), 1))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := governance.ParseRecordJSON(line)
		want, ok := referenceRead(line)
		if (err == nil) != ok {
			t.Fatalf("strict reader err=%v, reference accepts=%v, line %q", err, ok, line)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("readers disagree on %q:\n%+v\n%+v", line, got, want)
		}
	})
}
