package controller

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

var errStub = errors.New("stub policy store")

type governanceStoreStub struct{}

func (governanceStoreStub) Put(context.Context, governance.PolicySnapshot) error { return errStub }
func (governanceStoreStub) Get(context.Context, uuid.UUID, string) (governance.PolicySnapshot, error) {
	return governance.PolicySnapshot{}, errStub
}
func (governanceStoreStub) Activate(context.Context, uuid.UUID, string, *governance.ActorRef, time.Time) (governance.PolicySnapshot, error) {
	return governance.PolicySnapshot{}, errStub
}
func (governanceStoreStub) Bind(context.Context, governance.PolicyBinding) error { return errStub }
func (governanceStoreStub) Resolve(context.Context, string, string) (governance.PolicySnapshot, error) {
	return governance.PolicySnapshot{}, errStub
}
func (governanceStoreStub) Unbind(context.Context, policy.Unbinding) (int, error) { return 0, errStub }
func (governanceStoreStub) Bindings(context.Context) ([]governance.PolicyBinding, error) {
	return nil, errStub
}
