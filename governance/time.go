package governance

import (
	"fmt"
	"time"
)

// TimeLayout is the one text form of times in records: UTC, six fractional
// digits, a terminal Z (ADR-0087 D2).
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// AppendTime appends t in TimeLayout after converting it to UTC. Every
// record's chain input holds its time, written when the record is built
// and again when a store checks it, so the layout is written by hand for
// the years it has four digits for; time.Format, which parses the layout
// on every call, writes the others (fuzzed against it:
// FuzzAppendTime_SameAsTimeFormat).
func AppendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, TimeLayout)
	}
	hour, minute, sec := t.Clock()
	var b [len(TimeLayout)]byte
	put4(b[0:4], year)
	b[4] = '-'
	put2(b[5:7], int(month))
	b[7] = '-'
	put2(b[8:10], day)
	b[10] = 'T'
	put2(b[11:13], hour)
	b[13] = ':'
	put2(b[14:16], minute)
	b[16] = ':'
	put2(b[17:19], sec)
	b[19] = '.'
	us := t.Nanosecond() / 1000
	put2(b[24:26], us%100)
	put2(b[22:24], us/100%100)
	put2(b[20:22], us/10000)
	b[26] = 'Z'
	return append(dst, b[:]...)
}

// put2 writes n (0–99) as two decimal digits; put4 writes n (0–9999) as
// four.
func put2(b []byte, n int) { b[0], b[1] = byte('0'+n/10), byte('0'+n%10) }
func put4(b []byte, n int) { put2(b[0:2], n/100); put2(b[2:4], n%100) }

// FormatTime returns t in TimeLayout.
func FormatTime(t time.Time) string { return string(AppendTime(nil, t)) }

// NormalizeTime returns t in UTC truncated to microseconds, the precision a
// record keeps, so a value survives a JSON round trip unchanged. The zero
// time is refused: an aware time is required.
func NormalizeTime(field string, t time.Time) (time.Time, error) {
	if t.IsZero() {
		return time.Time{}, &ValidationError{Field: field, Reason: "time is required"}
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// ParseTime parses a time written exactly in TimeLayout
// (YYYY-MM-DDTHH:MM:SS.ffffffZ, UTC): an offset, another number of
// fractional digits or a ',' for the '.' — all valid RFC 3339 that other
// readers would see as a different string — are refused, never normalised.
func ParseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil || FormatTime(t) != s {
		return time.Time{}, &ValidationError{Field: field, Reason: fmt.Sprintf("must be a UTC time written exactly YYYY-MM-DDTHH:MM:SS.ffffffZ, not %q", truncateForError(s))}
	}
	return t, nil
}
