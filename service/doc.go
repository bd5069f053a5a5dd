// Package service owns the engine-level operations of a running govhost:
// tasks held open between requests, the two-phase governed call
// (authorize → permit, complete) with approvals that outlive one request,
// certificates, chain export and verification, policy management and the
// stateless evaluation. The HTTP server (package server) and the command
// line call it; it knows nothing of HTTP.
//
// Everything it keeps in memory is bounded: open tasks (MaxOpenTasks),
// waiting authorizations (dropped once read or after their lease),
// minted certificates (the most recent MaxCertificates). Closed task ids
// are not remembered: a request naming one is told the task is unknown or
// closed; a permit of a closed task is refused by the controller's permit
// book, which forgets on its own schedule.
package service
