package pathguard

import (
	"path"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJoinClean_MatchesPathJoin(t *testing.T) {
	for _, base := range []string{"/", "/ws", "/a/b"} {
		for _, rel := range []string{"x", "x/y", "./x", "x/../y", "../x", "x/", "a//b", "..", ".", "~x", "a/./b"} {
			want := path.Join(base, rel)
			require.Equal(t, want, joinClean(base, rel, want), "%s + %s (hint equal)", base, rel)
			require.Equal(t, want, joinClean(base, rel, "/other"), "%s + %s (hint other)", base, rel)
		}
	}
}
