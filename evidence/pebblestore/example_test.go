package pebblestore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/governance"
)

func Example() {
	dir, err := os.MkdirTemp("", "evidence")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	s, err := pebblestore.Open(dir, pebblestore.Options{BallastSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ctx := context.Background()
	chain := uuid.New()
	head, err := s.Head(ctx, chain) // governance.EmptyHead: a new chain
	if err != nil {
		panic(err)
	}
	r, err := governance.NextRecord(head, governance.RecordSpec{
		Type: governance.PolicyBound, ChainID: chain, PolicyID: uuid.New(), PolicyVersion: "1",
		Payload: map[string]any{"reason": "example"},
	})
	if err != nil {
		panic(err)
	}
	receipt, err := s.Append(ctx, r) // returns once the record is durable
	if err != nil {
		panic(err)
	}
	res, err := s.Verify(ctx, chain, receipt.HeadHash)
	if err != nil {
		panic(err)
	}
	fmt.Println(receipt.Sequence, res.Valid, res.CheckedRecords)
	// Output: 0 true 1
}
