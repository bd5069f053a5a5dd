// Package demo owns the scenario of `govhost demo`: a workspace under the
// data directory, a workspace policy with bash behind approval and the
// destructive-command guard, a short agent session whose reviewer approves
// running the tests and nothing else, the verification of its evidence
// chain and its certificate. The same session runs in process on the
// embedded default (InProcess) or through a running govhost serve
// (Through); both print the same verdicts.
//
// It does not own what it drives: the policy file comes from
// policy/policyfile's workspace template, storing it is the root's one
// store-a-policy-file operation, the session is the controller's or the
// server's.
package demo
