package bearer

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestToken_Matches(t *testing.T) {
	tok := New("0123456789abcdef0123456789abcdef")
	for header, want := range map[string]bool{
		"Bearer 0123456789abcdef0123456789abcdef":   true,
		"bearer 0123456789abcdef0123456789abcdef  ": true,
		"Bearer 0123456789abcdef0123456789abcdeX":   false,
		"Bearer 0123456789abcdef":                   false,
		"Basic 0123456789abcdef0123456789abcdef":    false,
		"0123456789abcdef0123456789abcdef":          false,
		"":                                          false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		require.Equal(t, want, tok.Matches(r), "%q", header)
	}
}
