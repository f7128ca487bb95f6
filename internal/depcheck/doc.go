// Package depcheck holds only a test: it enforces the import rules of
// docs/DESIGN.md ("Import rules") on the whole module, so a layering
// mistake fails CI instead of waiting for a reviewer.
package depcheck
