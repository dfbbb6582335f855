// Package safety holds the randomized safety test of the actor's decisions;
// it has no non-test code.
package safety
