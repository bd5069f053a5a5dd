// Package lint holds tests that keep the package rooms of DESIGN.md: which
// packages may import which. It has no code of its own.
package lint
