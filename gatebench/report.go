package gatebench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/govhost/govhost/abi"
)

// WriteText writes each result as a block of lines.
func WriteText(w io.Writer, results []Result) error {
	for _, r := range results {
		if _, err := fmt.Fprintf(w, "%s  (%s, %s, sha256 %.12s)\n  cold load:        %s (no cache), %s (compilation cache)\n  call (%d warm):   min %s, median %s, p99 %s\n  instance memory:  %s\n  verdicts:         %s\n",
			abi.DisplayText(r.Module), size(r.Size), r.Kind, r.SHA256, ms(r.ColdLoad), ms(r.ColdLoadCached),
			r.Calls, us(r.Min), us(r.Median), us(r.P99), mib(r.MemoryBytes), verdicts(r.Decisions)); err != nil {
			return err
		}
	}
	return nil
}

// WriteCompare writes a Markdown table of the results, with each module's
// median call and cached cold load as a ratio of the first module's.
func WriteCompare(w io.Writer, results []Result) error {
	if _, err := fmt.Fprintln(w, "| module | size | cold load, no cache | cold load, cached | call min | call median | call p99 | instance memory | median vs first |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"); err != nil {
		return err
	}
	for _, r := range results {
		ratio := "1.00×"
		if len(results) > 0 && results[0].Median > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(r.Median)/float64(results[0].Median))
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			abi.DisplayText(r.Module), size(r.Size), ms(r.ColdLoad), ms(r.ColdLoadCached), us(r.Min), us(r.Median), us(r.P99), mib(r.MemoryBytes), ratio); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the results as one JSON array.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.2f µs", float64(d)/float64(time.Microsecond)) }

// verdicts lists the counted verdicts, sorted; reason codes are the host's
// validated [a-z0-9_.-] codes, so they print as they are.
func verdicts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s ×%d", k, m[k])
	}
	return s
}
