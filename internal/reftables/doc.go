// Package reftables holds the constant tables of the standards gmtun
// implements, transcribed once: the reference tables for tests and
// generators only. Production code must not import it: the product's
// S-boxes are Boolean circuits or in-register shuffles (docs/SECURITY.md),
// and the few small constants the production code needs (SM4's FK and CK,
// ZUC's d constants, uBlock's round constants) are its own, each pinned to
// the table here by a test of its package. internal/depcheck fails when a
// package that the gmtun binary links imports this one.
//
// The tables are variables only because Go has no constant arrays: never
// write to them. reftables_test.go checks each against properties the
// standard states (a permutation, an inverse, a generating rule) and pins
// all of them with a SHA-256 digest.
package reftables
