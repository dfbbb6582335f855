package wire

// The platform's bounds. One field over any of them 400s the whole beat, so
// Cap holds every payload inside them; collectors may stop earlier.
const (
	MaxNodes         = 500
	MaxComponents    = 50
	MaxEvents        = 50
	MaxActions       = 20
	MaxMachineIssues = 20
	MaxAddons        = 100 // the wire's cap, although the CRD allows 256
	MaxPools         = 100
	MaxNamespaces    = 500 // byNamespace keys
	MaxCount         = 10_000_000

	// String lengths, in UTF-16 code units (see Clamp).
	MaxNameLen    = 253 // DNS subdomain: names, roles, targets, namespaces
	MaxLabelLen   = 63  // DNS label: statuses, reasons, kinds, types
	MaxVersionLen = 64  // versions, timestamps, hashes, instance types
	MaxNoteLen    = 256 // free text: event notes, action details, issue messages
)
