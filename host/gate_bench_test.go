package host_test

import (
	"context"
	"testing"

	"github.com/govhost/govhost/abi"
)

func BenchmarkGate_Evaluate(b *testing.B) {
	h := sharedHost(b)
	for _, fx := range []string{"allow.wasm", "trivial_go.wasm", "hostile_go.wasm", "toolgate.wasm", "c_gate.wasm"} {
		b.Run("fixture="+fx, func(b *testing.B) {
			g := gate(b, h, fx, "")
			in := input("read")
			in.Paths = []abi.PathFact{{Arg: "path", Raw: "a", Resolved: "/work/a", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/work/a"}}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.Evaluate(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
