package destructive_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/destructive"
)

func TestNew_AcceptsEmptyConfigs(t *testing.T) {
	for _, cfg := range []string{"", "  ", "null", "{}", " { } "} {
		g, err := destructive.New([]byte(cfg))
		require.NoError(t, err, "config %q", cfg)
		require.NotNil(t, g)
	}
	g, err := destructive.New(nil)
	require.NoError(t, err)
	require.NotNil(t, g)
}

func TestNew_RefusesFieldsAndNonObjects(t *testing.T) {
	cases := []struct {
		cfg   string
		field string
	}{
		{`{"families": ["rm"]}`, "families"},
		{`{"strict": true}`, "strict"},
		{`[]`, ""},
		{`"x"`, ""},
		{`{`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.cfg, func(t *testing.T) {
			_, err := destructive.New([]byte(tc.cfg))
			require.Error(t, err)
			require.ErrorIs(t, err, destructive.ErrConfig)
			var ce *destructive.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field)
			// Still matched after wrapping.
			wrapped := fmt.Errorf("gate %q: %w", "destructive", err)
			require.ErrorIs(t, wrapped, destructive.ErrConfig)
			require.True(t, errors.As(wrapped, &ce))
			if tc.field != "" {
				require.Contains(t, err.Error(), tc.field)
			}
		})
	}
}
