package governance

// IsDigest reports whether s matches ^[0-9a-f]{64}$, the one digest form.
func IsDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

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
