// Package poll pulls the desired-state document from the platform and hands
// it to the executor.
//
// The poller is the only place that decides whether the agent may act at all. A
// fresh, valid document is always acted on; a 304 acts again only when the last
// pass asked for a retry, on the document cached from the last 200. When the
// platform answers but authorizes nothing (a 4xx, or a document that does not
// decode and validate), every report is cleared and the cache is dropped, so
// nothing stale can be acted on later (closing docs/contract.md#g-1). When the
// platform cannot answer (5xx, 429, transport), what it authorized last still
// stands: the reports stay, and nothing acts until it answers again.
package poll
