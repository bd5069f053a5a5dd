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

// ParseTime parses a record time. It accepts RFC 3339 with any offset (an
// aware time) and at most microsecond precision, and returns it in UTC.
func ParseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &ValidationError{Field: field, Reason: fmt.Sprintf("not an RFC 3339 time with offset: %q", s)}
	}
	if t.Nanosecond()%1000 != 0 {
		return time.Time{}, &ValidationError{Field: field, Reason: "time has sub-microsecond precision"}
	}
	return t.UTC(), nil
}
