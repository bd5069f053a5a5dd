package agents

import (
	"errors"
	"sort"
	"strings"
	"sync"
)

// ErrReplayedToolUse refuses a pre-tool event whose tool_use_id this
// session has already authorized: an agent asks once per call.
var ErrReplayedToolUse = errors.New("agents: tool_use_id already authorized in this session")

// ErrNoPending refuses a post-tool event that matches no authorized,
// uncompleted call of its session.
var ErrNoPending = errors.New("agents: no authorized call of this session matches the post-tool event")

// Pending holds one agent session's authorized, not yet completed tool
// calls by CorrelationKey, each with its permits (type P, the server's).
// Keys from tool_use_ids are one-use for the session's lifetime; input
// keys (agents without ids) queue first in, first out, since an agent may
// legitimately run the same call twice. Safe for concurrent use.
type Pending[P any] struct {
	mu      sync.Mutex
	waiting map[string][]held[P]
	claimed map[string]bool
	seq     uint64
}

type held[P any] struct {
	seq     uint64
	permits P
}

// NewPending returns an empty Pending.
func NewPending[P any]() *Pending[P] {
	return &Pending[P]{waiting: map[string][]held[P]{}, claimed: map[string]bool{}}
}

// Claim reserves key before its call is authorized; a tool_use_id key
// claimed before is ErrReplayedToolUse, and nothing is reserved.
func (p *Pending[P]) Claim(key string) error {
	if !strings.HasPrefix(key, "id:") {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed[key] {
		return ErrReplayedToolUse
	}
	p.claimed[key] = true
	return nil
}

// Hold records the permits of an authorized call under key.
func (p *Pending[P]) Hold(key string, permits P) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	p.waiting[key] = append(p.waiting[key], held[P]{seq: p.seq, permits: permits})
}

// Take removes and returns the oldest permits held under key, or
// ErrNoPending.
func (p *Pending[P]) Take(key string) (P, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.waiting[key]
	if len(q) == 0 {
		var zero P
		return zero, ErrNoPending
	}
	first := q[0].permits
	if len(q) == 1 {
		delete(p.waiting, key)
	} else {
		p.waiting[key] = q[1:]
	}
	return first, nil
}

// Drain removes and returns every permit still held, oldest first, for
// the session's end: a call the agent never reported has no outcome, and
// its operation must be completed (as failed) before the task can be
// certified.
func (p *Pending[P]) Drain() []P {
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []held[P]
	for k, q := range p.waiting {
		all = append(all, q...)
		delete(p.waiting, k)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	out := make([]P, len(all))
	for i, h := range all {
		out[i] = h.permits
	}
	return out
}

// Len is the number of held calls.
func (p *Pending[P]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, q := range p.waiting {
		n += len(q)
	}
	return n
}
