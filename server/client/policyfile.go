package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// PutPolicyFile stores an operator's policy file on the server, as
// `govhost policy put` does when a server holds the data directory: it
// uploads the file's modules first (digest → bytes; content-addressed, so
// an upload changes no policy; each must come back under its digest), then
// sends file, whose gates name those modules by digest
// (govhost.PolicyFile.WireText). snap is the file's snapshot as parsed on
// this side: a server that stores another digest is an error. created
// reports whether the server did not hold the version before.
func (c *Client) PutPolicyFile(ctx context.Context, snap governance.PolicySnapshot, file json.RawMessage, modules map[string][]byte) (sum api.PolicySummary, created bool, err error) {
	digests := make([]string, 0, len(modules))
	for d := range modules {
		digests = append(digests, d)
	}
	sort.Strings(digests) // NB: a refusal names the same module every run
	for _, digest := range digests {
		up, err := c.UploadModule(ctx, modules[digest])
		if err != nil {
			return api.PolicySummary{}, false, fmt.Errorf("module %s: %w", digest, err)
		}
		if up.SHA256 != digest {
			return api.PolicySummary{}, false, fmt.Errorf("module %s: the server stored it as %s", digest, up.SHA256)
		}
	}
	_, err = c.ShowPolicy(ctx, snap.PolicyID(), snap.Version())
	var refused *Error
	created = errors.As(err, &refused) && refused.Code == "policy_not_found"
	if err != nil && !created {
		return api.PolicySummary{}, false, err
	}
	if sum, err = c.PutPolicy(ctx, file); err != nil {
		return api.PolicySummary{}, false, err
	}
	if sum.Digest != snap.Digest() {
		return api.PolicySummary{}, false, fmt.Errorf("the server stored %s@%s with digest %s, this file has %s", sum.PolicyID, sum.Version, sum.Digest, snap.Digest())
	}
	return sum, created, nil
}
