// Package shared is the root of what both kubehz-agent binaries need: the wire
// types, configuration, token resolution, the platform client and backoff.
// It holds no code itself; see its sub-packages.
package shared
