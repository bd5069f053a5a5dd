// Package scaffold owns gate project templates (`govhost gate new`): for
// each SDK language it writes a project — gate source, build file, cases
// file, README, and the SDK's sources where the language has no package
// registry govhost publishes to — that builds and passes `govhost test`
// as generated.
package scaffold
