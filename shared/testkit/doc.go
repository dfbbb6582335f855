// Package testkit holds what the package tests of all three modules share:
// a log sink safe for concurrent writers, a component run for the length of
// a test, waits for goroutines that must go quiet, the checks of a binary's
// command line and of its settings, and a stand-in for the actor's lease
// fence. It is for tests only; test/release fails if either binary links it.
//
// It lives in shared, outside internal/, because Go lets internal/ packages
// be imported only from within their own module, and the actor's and the
// observer's tests need the same helpers.
package testkit
