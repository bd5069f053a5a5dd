package govhost_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
)

// residentChildEnv names the data directory a child process of
// BenchmarkResidentSize/restart measures (its compilation cache filled by
// the parent): a restarted process, whose heap holds nothing of a compile.
const residentChildEnv = "GOVHOST_BENCH_RESIDENT_DIR"

// resident is where a process's resident memory is, in MiB.
type resident struct {
	RSS      float64 `json:"rss"`       // VmRSS
	Binary   float64 `json:"binary"`    // file-backed pages of the executable (code, rodata, the embedded modules)
	Code     float64 `json:"code"`      // anonymous executable mappings: wazero's compiled guest code
	Heap     float64 `json:"heap"`      // Go heap spans in use (objects, linear memories among them)
	HeapFree float64 `json:"heap_free"` // Go heap free but not yet returned to the OS (a compile's garbage)
	Linear   float64 `json:"linear"`    // the pooled instances' linear memories (part of Heap)
}

func (r resident) report(b *testing.B) {
	b.ReportMetric(r.RSS, "RSS-MiB")
	b.ReportMetric(r.Binary, "binary-MiB")
	b.ReportMetric(r.Code, "code-MiB")
	b.ReportMetric(r.Heap, "heap-MiB")
	b.ReportMetric(r.HeapFree, "heap-free-MiB")
	b.ReportMetric(r.Linear, "linear-MiB")
}

// BenchmarkResidentSize reports the resident set of a process that has
// loaded the three built-in gates and filled a pool of GOMAXPROCS instances
// of each with concurrent governed calls, and where it is. cache=cold: this
// process compiled the modules (a first start; the compiler's garbage stays
// in the heap until the Go runtime returns it to the OS). restart: a fresh
// process (this test binary, run again) on a warm compilation cache.
func BenchmarkResidentSize(b *testing.B) {
	if dir := os.Getenv(residentChildEnv); dir != "" {
		b.Run("child", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r := measureResident(b, dir)
				out, err := json.Marshal(r)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "resident.json"), out, 0o600); err != nil {
					b.Fatal(err)
				}
			}
		})
		return
	}
	b.Run("cache=cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			measureResident(b, b.TempDir()).report(b)
		}
	})
	b.Run("restart", func(b *testing.B) {
		dir := b.TempDir()
		e := newBenchEnvIn(b, dir, evidence.NewMemStore()) // fills the compilation cache
		if err := e.eng.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkResidentSize$", "-test.benchtime=1x")
			cmd.Env = append(os.Environ(), residentChildEnv+"="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("child: %v\n%s", err, out)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "resident.json"))
			if err != nil {
				b.Fatal(err)
			}
			var r resident
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
			r.report(b)
		}
	})
}

// measureResident opens the engine on dir, fills each gate's pool with
// concurrent calls, and measures; the engine is closed afterwards.
func measureResident(b *testing.B, dir string) resident {
	ctx := context.Background()
	e := newBenchEnvIn(b, dir, evidence.NewMemStore())
	defer e.eng.Close(ctx)
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
	if err != nil {
		b.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	done := make(chan struct{})
	for range procs {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				e.invoke(b, task)
			}
		}()
	}
	for range procs {
		<-done
	}
	runtime.GC()
	var r resident
	for _, g := range e.gates {
		// NB: one idle instance's memory stands for each of the pool's:
		// instances of one gate serve the same calls.
		if mg, ok := g.(interface {
			MemoryBytes(context.Context) (uint64, error)
		}); ok {
			n, err := mg.MemoryBytes(ctx)
			if err != nil {
				b.Fatal(err)
			}
			r.Linear += float64(n) * float64(procs) / (1 << 20)
		}
	}
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(samples)
	r.Heap = float64(samples[0].Value.Uint64()+samples[1].Value.Uint64()) / (1 << 20)
	r.HeapFree = float64(samples[2].Value.Uint64()) / (1 << 20)
	r.RSS, r.Binary, r.Code = residentMappings()
	return r
}

// residentMappings reads /proc/self/smaps (Linux; zeros elsewhere): the
// whole resident set, the executable's file-backed part, and the anonymous
// executable mappings (compiled guest code), in MiB.
func residentMappings() (total, binary, code float64) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, 0, 0
	}
	exe, _ := os.Executable()
	var kind string // "binary", "code" or "" for the mapping being read
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 { // a mapping's header
			path := ""
			if len(f) >= 6 {
				path = f[5]
			}
			switch {
			case path != "" && path == exe:
				kind = "binary"
			case path == "" && f[1][2] == 'x':
				kind = "code"
			default:
				kind = ""
			}
			continue
		}
		if len(f) < 2 || f[0] != "Rss:" {
			continue
		}
		kib, _ := strconv.ParseFloat(f[1], 64)
		mib := kib / 1024
		total += mib
		switch kind {
		case "binary":
			binary += mib
		case "code":
			code += mib
		}
	}
	return total, binary, code
}
