package controller

import (
	"sync"
	"sync/atomic"

	"github.com/govhost/govhost/governance"
)

// Observation is what the projector announces about a committed record:
// identifiers only, never payloads, arguments, results or detail
// (ADR-0087 D7). A consumer that needs proof follows the ids to the
// evidence store and verifies against a trusted head.
type Observation struct {
	OperationID   string `json:"operation_id"`
	ChainID       string `json:"chain_id"`
	RecordID      string `json:"record_id"`
	RecordType    string `json:"record_type"`
	ChainHash     string `json:"chain_hash"`
	PolicyVersion string `json:"policy_version"`
}

// ObservationProjector publishes committed records to subscribers. It is
// non-authoritative: a slow subscriber loses observations (counted in
// Dropped) instead of blocking a governed call, and a panicking subscriber
// is contained. A nil *ObservationProjector publishes nothing.
type ObservationProjector struct {
	mu      sync.RWMutex
	subs    map[*subscriber]struct{}
	dropped atomic.Int64
}

// subscriber holds at most limit pending observations, as a channel of
// that capacity would, but in a queue that grows only as far as it is
// filled: the engine's sealer keeps up to 4096 pending, and a channel that
// large cost every Open 0.4 MB (96 bytes an observation) to hold the one
// or two a task closing leaves pending.
type subscriber struct {
	mu      sync.Mutex
	pending []Observation // the queue: pending[head:]
	head    int
	limit   int
	closed  bool
	wake    chan struct{} // capacity 1: something was queued, or closed
	done    chan struct{}
	// want, when set, picks the records this subscriber is told of.
	want func(governance.EvidenceRecord) bool
}

// offer queues o unless limit observations are pending (a channel send
// that would not block); Project holds the projector's read lock, under
// which cancel cannot close the subscriber.
func (s *subscriber) offer(o Observation) bool {
	s.mu.Lock()
	if len(s.pending)-s.head >= s.limit {
		s.mu.Unlock()
		return false
	}
	if s.head > 0 && len(s.pending) == cap(s.pending) {
		// Reuse the room of what was delivered before growing.
		n := copy(s.pending, s.pending[s.head:])
		clear(s.pending[n:])
		s.pending, s.head = s.pending[:n], 0
	}
	s.pending = append(s.pending, o)
	s.mu.Unlock()
	s.signal()
	return true
}

// close ends the subscriber once what is pending is delivered.
func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
}

// signal wakes next if it waits (wake holds at most one signal).
func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest pending observation, one at a time as a channel
// receive does (so pending counts what fn has not started, as len(ch)
// did); ok is false once the subscriber is closed and drained.
func (s *subscriber) next() (o Observation, ok bool) {
	for {
		s.mu.Lock()
		if s.head < len(s.pending) {
			o = s.pending[s.head]
			s.pending[s.head] = Observation{} // drop its strings for the GC
			s.head++
			if s.head == len(s.pending) {
				s.pending, s.head = s.pending[:0], 0
			}
			s.mu.Unlock()
			return o, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Observation{}, false
		}
		<-s.wake
	}
}

// NewObservationProjector returns a projector with no subscribers.
func NewObservationProjector() *ObservationProjector {
	return &ObservationProjector{subs: map[*subscriber]struct{}{}}
}

// Subscribe calls fn for each observation on its own goroutine, holding at
// most buffer pending observations (at least 1). The returned cancel stops
// delivery and waits for fn to return.
func (p *ObservationProjector) Subscribe(buffer int, fn func(Observation)) (cancel func()) {
	return p.Watch(nil, buffer, fn)
}

// Watch is Subscribe for the records want picks: fn is told only of
// those, and a record no subscriber wants costs no observation (every
// governed call commits six records; the engine's sealer wants one record
// a task). want runs on the appending goroutine, once a committed record,
// under no lock of the store's: it must be quick and must not block. A
// nil want picks every record.
func (p *ObservationProjector) Watch(want func(governance.EvidenceRecord) bool, buffer int, fn func(Observation)) (cancel func()) {
	if buffer < 1 {
		buffer = 1
	}
	s := &subscriber{limit: buffer, wake: make(chan struct{}, 1), done: make(chan struct{}), want: want}
	p.mu.Lock()
	p.subs[s] = struct{}{}
	p.mu.Unlock()
	go func() {
		defer close(s.done)
		for o, ok := s.next(); ok; o, ok = s.next() {
			deliver(fn, o)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			delete(p.subs, s)
			p.mu.Unlock()
			s.close()
			<-s.done
		})
	}
}

func deliver(fn func(Observation), o Observation) {
	defer func() { _ = recover() }() // a subscriber's failure never reaches the call
	fn(o)
}

// Project announces a committed record. It never blocks.
func (p *ObservationProjector) Project(r governance.EvidenceRecord) {
	if p == nil {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.subs) == 0 {
		return // nobody listens: no observation to build (the common case on the hot path)
	}
	var o Observation
	built := false
	for s := range p.subs {
		if s.want != nil && !s.want(r) {
			continue
		}
		if !built {
			o, built = observationOf(r), true
		}
		if !s.offer(o) {
			p.dropped.Add(1)
		}
	}
}

// observationOf is what subscribers are told of r.
func observationOf(r governance.EvidenceRecord) Observation {
	o := Observation{
		ChainID: r.ChainID.String(), RecordID: r.RecordID.String(), RecordType: string(r.RecordType),
		ChainHash: r.ChainHash, PolicyVersion: r.PolicyVersion,
	}
	if r.OperationID.Valid {
		o.OperationID = r.OperationID.UUID.String()
	}
	return o
}

// Dropped counts observations lost to full subscriber queues.
func (p *ObservationProjector) Dropped() int64 {
	if p == nil {
		return 0
	}
	return p.dropped.Load()
}
