package governance

// IsDigest reports whether s matches ^[0-9a-f]{64}$, the one digest form.
func IsDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	// A table load a byte and no branch: three digests of every record are
	// checked on each append and again on each verify.
	var bad byte
	for i := 0; i < len(s); i++ {
		bad |= notLowerHex[s[i]]
	}
	return bad == 0
}

var notLowerHex = func() (t [256]byte) {
	for i := range t {
		if (i < '0' || i > '9') && (i < 'a' || i > 'f') {
			t[i] = 1
		}
	}
	return t
}()

func checkDigest(field, s string) error {
	if !IsDigest(s) {
		return &ValidationError{Field: field, Reason: "must be 64 lowercase hex characters"}
	}
	return nil
}

// checkOptionalDigest accepts "" (absent, null in JSON) or a digest.
func checkOptionalDigest(field, s string) error {
	if s == "" {
		return nil
	}
	return checkDigest(field, s)
}
