package controller_test

import (
	"runtime"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

func projectRecords(p *controller.ObservationProjector, n int) []string {
	ids := make([]string, n)
	chain := uuid.New()
	for i := range ids {
		r := governance.EvidenceRecord{RecordID: uuid.New(), ChainID: chain, RecordType: governance.TaskClosed}
		ids[i] = r.RecordID.String()
		p.Project(r)
	}
	return ids
}

// A subscriber holds at most buffer observations that its fn has not
// started, as a channel of that capacity did: with fn busy on the first,
// the next buffer are kept and the rest dropped (counted), and what was
// kept is delivered in order, also when cancel comes while it waits.
func TestObservationProjector_HoldsBufferPendingAndDropsTheRest(t *testing.T) {
	for _, buffer := range []int{1, 3, 4096} {
		p := controller.NewObservationProjector()
		started, release := make(chan struct{}), make(chan struct{})
		var got []string
		cancel := p.Subscribe(buffer, func(o controller.Observation) {
			if len(got) == 0 {
				close(started)
				<-release
			}
			got = append(got, o.RecordID)
		})
		ids := projectRecords(p, 1)
		<-started // fn holds the first: it no longer counts as pending
		ids = append(ids, projectRecords(p, buffer+5)...)
		require.EqualValues(t, 5, p.Dropped(), "buffer %d: the observations past the buffer are dropped", buffer)
		close(release)
		cancel() // returns once what was pending is delivered
		require.Equal(t, ids[:1+buffer], got, "buffer %d", buffer)
		require.EqualValues(t, 5, p.Dropped())
	}
}

// A subscriber's room is taken as it fills, not reserved: the engine's
// sealer subscribes with a buffer of 4096 at every Open, and a channel of
// that capacity allocated 0.4 MB there (issue 26, start-up).
func TestObservationProjector_BufferIsNotAllocatedUpFront(t *testing.T) {
	p := controller.NewObservationProjector()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const subscribers = 20
	cancels := make([]func(), subscribers)
	for i := range cancels {
		cancels[i] = p.Subscribe(4096, func(controller.Observation) {})
	}
	runtime.ReadMemStats(&after)
	for _, c := range cancels {
		c()
	}
	perSubscriber := (after.TotalAlloc - before.TotalAlloc) / subscribers
	require.Less(t, perSubscriber, uint64(8<<10), "bytes allocated by one Subscribe(4096)")
}
