package service

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// maxRecentlyClosed bounds the closed tasks kept for Tasks.
const maxRecentlyClosed = 1000

// TaskState is a task as the console lists it: open, or closed with its
// head and the certificate minted for its chain (if any).
type TaskState struct {
	TaskInfo
	State         string
	Head          string
	OpenedAt      *time.Time
	ClosedAt      *time.Time
	CertificateID *uuid.UUID
}

// closedBook keeps the most recently closed tasks, oldest dropped first.
type closedBook struct {
	mu     sync.Mutex
	closed []ClosedTask
}

func (b *closedBook) add(c ClosedTask) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = append(b.closed, c)
	if len(b.closed) > maxRecentlyClosed {
		b.closed = append(b.closed[:0:0], b.closed[len(b.closed)-maxRecentlyClosed:]...)
	}
}

func (b *closedBook) list() []ClosedTask {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]ClosedTask(nil), b.closed...)
}

// Tasks lists the open tasks, then the ones closed since this process
// started (the last 1000, newest first), each with the certificate minted
// for its chain here, if any.
func (s *Service) Tasks(ctx context.Context) []TaskState {
	open := s.ListTasks(ctx)
	closed := s.closedTasks.list()
	out := make([]TaskState, 0, len(open)+len(closed))
	for _, t := range open {
		out = append(out, TaskState{TaskInfo: t, State: "open"})
	}
	for i := len(closed) - 1; i >= 0; i-- {
		c := closed[i]
		st := TaskState{TaskInfo: c.TaskInfo, State: "closed", Head: c.Head, OpenedAt: &c.OpenedAt, ClosedAt: &c.ClosedAt}
		if cert, ok := s.certs.byChain(c.ChainID); ok {
			id := cert.Certificate.CertificateID
			st.CertificateID = &id
		}
		out = append(out, st)
	}
	return out
}
