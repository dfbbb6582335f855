// Package shared is the root of what both kubehz-agent binaries need: the wire
// types, configuration, token resolution, the platform client and backoff.
// What one binary alone uses lives under that binary instead. It holds no
// code itself; see its sub-packages.
package shared
