package gatetest

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/govhost/govhost/abi"
)

// WriteText writes the report for a terminal: one line per case (ok or
// FAIL), the differences of each failed case, and a summary. Every string
// that came from the guest (and the case names) goes through
// abi.DisplayText, so control characters and escape sequences in a verdict
// are shown quoted, never interpreted.
func (r Report) WriteText(w io.Writer) error {
	bw := &errWriter{w: w}
	for _, c := range r.Cases {
		if c.Pass {
			bw.printf("ok    %s\n", abi.DisplayText(c.Name))
			continue
		}
		bw.printf("FAIL  %s\n", abi.DisplayText(c.Name))
		for _, d := range c.Diff {
			bw.printf("        %s: want %s, got %s\n", d.Field, display(d.Want), display(d.Got))
		}
		if c.Error != "" {
			bw.printf("        error: %s\n", c.Error)
		}
	}
	status := "PASS"
	if !r.OK() {
		status = "FAIL"
	}
	bw.printf("%s: %d passed, %d failed (%s, sha256 %s)\n", status, r.Passed, r.Failed, r.File, r.SHA256)
	return bw.err
}

// WriteJSON writes the report as one indented JSON document.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// display shows a compared value: "" for an empty one, else abi.DisplayText.
func display(s string) string {
	if s == "" {
		return `""`
	}
	return abi.DisplayText(s)
}
