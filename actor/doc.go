// Package actor will hold the managed tier's acting Deployment: the
// leader-elected desired-state poller and its guarded executor. Until that
// lands the module only reserves its place in the workspace; nothing here
// acts, and deploy/ ships no actor.
package actor
