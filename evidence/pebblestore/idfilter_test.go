package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// loadedFilter is a filter whose (empty) store has been read.
func loadedFilter() *idFilter {
	f := newIDFilter()
	f.loaded.Store(true)
	return f
}

// Every id added is "maybe stored", whatever the ids look like (random,
// counting, all but one byte zero), across the filter's growth; fresh
// random ids are "certainly absent" at least 97 % of the time.
func TestIDFilter_NeverForgetsAnAddedID(t *testing.T) {
	f := loadedFilter()
	var added []uuid.UUID
	for i := range 150_000 {
		var id uuid.UUID
		switch i % 3 {
		case 0:
			id = uuid.New()
		case 1:
			binary.BigEndian.PutUint64(id[8:], uint64(i))
		case 2:
			id[i%16] = byte(i)
			id[(i+1)%16] = byte(i >> 8)
		}
		f.add(id)
		added = append(added, id)
	}
	require.Greater(t, len(*f.gens.Load()), 1, "150k ids outgrow the first generation")
	for _, id := range added {
		require.False(t, f.absent(id), "added id %s reported absent", id)
	}
	falsePositives := 0
	const fresh = 100_000
	for range fresh {
		if !f.absent(uuid.New()) {
			falsePositives++
		}
	}
	require.Less(t, falsePositives, fresh*3/100, "false positives")
}

// Until the stored ids are loaded, nothing is "certainly absent".
func TestIDFilter_NothingAbsentBeforeLoad(t *testing.T) {
	f := newIDFilter()
	require.False(t, f.absent(uuid.New()))
}

// Past maxFilteredIDs the filter switches off (its memory freed): every id
// is then looked up in Pebble.
func TestIDFilter_SwitchesOffPastItsLimit(t *testing.T) {
	defer func(v int64) { maxFilteredIDs = v }(maxFilteredIDs)
	maxFilteredIDs = 100_000
	f := loadedFilter()
	for range 200_000 {
		f.add(uuid.New())
	}
	require.True(t, f.off.Load())
	require.Empty(t, *f.gens.Load())
	require.False(t, f.absent(uuid.New()))
}

// waitLoaded starts s's load of its stored record ids, as its first
// append would, and waits until it is done.
func waitLoaded(t *testing.T, s *Store) {
	t.Helper()
	s.loadIDs()
	select {
	case <-s.loadDone:
	case <-time.After(time.Minute):
		t.Fatal("record ids not loaded within a minute")
	}
	require.True(t, s.ids.loaded.Load())
}

// A reopened store refuses, on another chain, a record id it held before
// the restart (the filter loaded from the id index says "maybe", the
// index says "yes"), and answers fresh ids without a lookup.
func TestStore_DuplicateIDAcrossRestartWithTheFilterLoaded(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	_, recs := storetest.Fill(t, s, 3)
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	waitLoaded(t, s)
	reused, err := governance.NextRecord(governance.EmptyHead, governance.RecordSpec{
		RecordID: recs[1].RecordID, Type: governance.PolicyBound, ChainID: uuid.New(),
		PolicyID: uuid.New(), PolicyVersion: "1",
	})
	require.NoError(t, err)
	require.False(t, s.allAbsent([]governance.EvidenceRecord{reused}), "a stored id is never certainly absent")
	_, err = s.Append(ctx, reused)
	var ce *governance.EvidenceConflictError
	require.True(t, errors.As(err, &ce), "got %v", err)
	require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind)

	absent := 0
	for range 100 {
		if s.allAbsent([]governance.EvidenceRecord{storetest.Next(t, governance.EmptyHead, uuid.New())}) {
			absent++
		}
	}
	require.GreaterOrEqual(t, absent, 95, "fresh ids answered without a lookup (bar false positives)")
	fresh := storetest.Next(t, governance.EmptyHead, uuid.New())
	_, err = s.Append(ctx, fresh)
	require.NoError(t, err)
	require.False(t, s.ids.absent(fresh.RecordID), "an appended id is remembered")
}

// Close during the load of a large index stops it and closes cleanly.
func TestStore_CloseDuringLoad(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	recs := buildChainT(t, 30_000)
	for i := 0; i < len(recs); i += 1000 {
		_, err := s.AppendBatch(ctx, recs[i:i+1000])
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	for range 5 {
		s, err := Open(dir, Options{BallastSize: -1})
		require.NoError(t, err)
		s.loadIDs()
		require.NoError(t, s.Close())
	}
	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	waitLoaded(t, s)
	require.False(t, s.ids.absent(recs[29_999].RecordID))
}

// A store that is only read never scans its id index: the load starts at
// the first append.
func TestStore_IDFilterLoadsAtTheFirstAppend(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	storetest.Fill(t, s, 2)
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	ids, err := s.Chains(ctx, uuid.Nil, 10)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	recs, err := s.Read(ctx, ids[0], 0)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	require.Nil(t, s.loadDone, "reads start no load")
	_, err = s.Append(ctx, storetest.Next(t, governance.EmptyHead, uuid.New()))
	require.NoError(t, err)
	require.NotNil(t, s.loadDone, "the first append starts it")
}
