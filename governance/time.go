package governance

import (
	"fmt"
	"time"
)

// TimeLayout is the one text form of times in records: UTC, six fractional
// digits, a terminal Z (ADR-0087 D2).
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// AppendTime appends t in TimeLayout after converting it to UTC.
func AppendTime(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, TimeLayout)
}

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
