package evidence

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// memPayloadRoundTrip writes each payload's short form at the end of one
// chain's arena, as encode does, and requires it to give the payload back
// byte for byte, at most as long as the payload, and of the length
// payloadLen says.
func memPayloadRoundTrip(t *testing.T, payloads ...string) {
	t.Helper()
	c := &memChain{}
	type written struct {
		ref   memRef
		n     int
		short bool
	}
	var forms []written
	for _, p := range payloads {
		dst, ref := c.reserve(len(p))
		dst, short := c.appendPayload(dst, p, ref)
		if !short {
			require.True(t, hasControlByte(p), "a payload without a control byte has a short form: %q", p)
			require.Empty(t, dst)
			dst = append(dst, p...)
		}
		require.LessOrEqual(t, len(dst), len(p))
		last := &c.chunks[len(c.chunks)-1]
		*last = (*last)[:len(*last)+len(dst)]
		forms = append(forms, written{ref, len(dst), short})
	}
	// NB: after all are written, as a read comes after later appends.
	for i, p := range payloads {
		enc := c.bytesAt(forms[i].ref)[:forms[i].n]
		if !forms[i].short {
			require.True(t, p == string(enc), "payload %d kept as it is", i)
			continue
		}
		// NB: not require.Equal, whose diff of long texts takes minutes.
		if got := string(c.expandPayload(nil, enc)); got != p {
			t.Fatalf("payload %d (%d bytes) gives back %d bytes, first difference at %d: %.200q", i, len(p), len(got), firstDifference(got, p), p)
		}
		require.Equal(t, len(p), c.payloadLen(enc), "payload %d", i)
	}
}

func TestMemPayload_GovernedCallPayloads(t *testing.T) {
	call := governedCallPayloads
	memPayloadRoundTrip(t, append(call, call...)...)
	c := &memChain{}
	total, short := 0, 0
	for _, p := range append(call, call...) {
		dst, ref := c.reserve(len(p))
		dst, _ = c.appendPayload(dst, p, ref)
		last := &c.chunks[len(c.chunks)-1]
		*last = (*last)[:len(*last)+len(dst)]
		total, short = total+len(p), short+len(dst)
	}
	require.Less(t, short, total/2, "the short forms of a call's payloads")
}

func FuzzMemPayload_RoundTrip(f *testing.F) {
	f.Add(`{"tool_id":"bash"}`, `{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177"}`)
	f.Add(`{"a":"91578E5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","tool_id"`, `["3886896b-3908-44be-a8bd-d1f33757e9c6","3886896B-3908-44be-a8bd-d1f33757e9c6"]`)
	f.Add(`{"x":"a\"b\\","tool_id":"\u00e9\"","gate_id":1}`, `"unterminated \"tool_id":`)
	f.Add("{\"x\":\"\x01\x02\x03\"}", `{"fields":["tool_id","phase"],"phase":"check"}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		memPayloadRoundTrip(t, a, b, a, strings.Repeat(b, 3))
	})
}

func firstDifference(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// BenchmarkMemPayload_Call is the short form of one governed call's six
// payloads (three gates), on a chain that has seen the call's digests.
func BenchmarkMemPayload_Call(b *testing.B) {
	call := governedCallPayloads
	c := &memChain{}
	size := 0
	for _, p := range call {
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%1000 == 0 {
			c = &memChain{}
		}
		for _, p := range call {
			dst, ref := c.reserve(len(p))
			dst, _ = c.appendPayload(dst, p, ref)
			last := &c.chunks[len(c.chunks)-1]
			*last = (*last)[:len(*last)+len(dst)]
		}
	}
}

// governedCallPayloads are the payloads of one governed call with three
// gates, as the controller writes them.
var governedCallPayloads = []string{
	`{"gate_count":3,"policy_digest":"10255eea2b83ad544f19621485731a3de5574497614adb80c78bbd916dedcec7","task_boundary_id":"3886896b-3908-44be-a8bd-d1f33757e9c6","tool_id":"bash"}`,
	`{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","fields":["command"],"task_boundary_id":"3886896b-3908-44be-a8bd-d1f33757e9c6","tool_id":"bash"}`,
	`{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","decision":"allow","duration_us":49,"gate_id":"permission","level":"hard","module_digest":"64d242ba68ea002a91b4096674c5a763612e4053a40fb4df24474477cae556d6","phase":"check","reason_code":"ok"}`,
	`{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","decision":"allow","duration_us":0,"gate_id":"pathguard","level":"hard","module_digest":"45138d61a241e651811cdf5edff5f9b0ab570c94e5bb2f62969e479f18ff6a7b","phase":"check","reason_code":"ok"}`,
	`{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","decision":"allow","duration_us":0,"gate_id":"destructive","level":"advisory","module_digest":"cbeaa85f0a16c153a546d6a14bfbaed17c2c0a8504b48f7546d686b2134da8df","phase":"check","reason_code":"ok"}`,
	`{"argument_digest":"91578e5380dc45003672db5c1ab87a1bb4944080fd7b821111fcb6419c1d1177","duration_us":0,"tool_id":"bash"}`,
}
