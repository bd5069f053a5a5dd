package gatecases_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/sdk/gatecases"
)

func TestParse_BadFiles(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		yaml bool
		want string
	}{
		"not json":          {`{"cases":`, false, "unexpected EOF"},
		"not yaml":          {"cases: [", true, "YAML"},
		"no cases":          {`{"cases":[]}`, false, "no cases"},
		"unknown field":     {`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a","mesage":"x"}}]}`, false, "unknown field"},
		"bad decision":      {`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"maybe","reason_code":"a"}}]}`, false, "want.decision"},
		"bad reason":        {`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"Not Valid"}}]}`, false, "want.reason_code"},
		"duplicate":         {`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a"}},{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a"}}]}`, false, "duplicate"},
		"no name":           {`{"cases":[{"input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a"}}]}`, false, "no name"},
		"no tool":           {`{"cases":[{"name":"a","want":{"decision":"allow","reason_code":"a"}}]}`, false, "input.tool"},
		"config not object": {`{"config":[1],"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a"}}]}`, false, "config"},
		"trailing":          {`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a"}}]} {}`, false, "trailing"},
		"non-string keys":   {"cases:\n  - {1: 2}\n", true, "YAML"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gatecases.Parse([]byte(tc.doc), tc.yaml)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	_, err := gatecases.LoadFile(filepath.Join(dir, "missing.json"))
	var fe *gatecases.FileError
	require.ErrorAs(t, err, &fe)
	require.True(t, errors.Is(err, os.ErrNotExist))

	doc := "cases:\n  - name: a\n    input: {tool: x}\n    want: {decision: allow, reason_code: a.ok}\n"
	for _, name := range []string{"c.yaml", "c.yml", "c.cases"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o600))
		f, err := gatecases.LoadFile(p)
		require.NoError(t, err, name)
		require.Equal(t, "a", f.Cases[0].Name)
	}
	p := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o600))
	_, err = gatecases.LoadFile(p)
	require.ErrorAs(t, err, &fe, "a .json file is read as JSON")
	require.True(t, strings.HasSuffix(fe.Path, "c.json"))

	_, err = gatecases.LoadFile(filepath.Join(dir, "c.yaml"))
	require.NoError(t, err)
}
