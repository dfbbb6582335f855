package platform

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"kubehz.dev/agent/shared/wire"
)

// maxVerdictBytes is how much of a 2xx heartbeat body is read for the
// availableUpdates verdict (docs/contract.md#available-updates). A longer body
// carries no verdict.
const maxVerdictBytes = 128 << 10

// PostHeartbeat sends one encoded payload (docs/contract.md#heartbeat). Any 2xx
// is a delivered beat, whatever its body says; the Verdict is a by-product and
// a body the client cannot read simply carries none. Errors are *StatusError
// (or *RedirectError) for an answer, anything else for a failed exchange.
func (c *Client) PostHeartbeat(ctx context.Context, body []byte) (Verdict, error) {
	resp, err := c.send(ctx, request{
		op:     "send heartbeat",
		method: http.MethodPost,
		url:    c.heartbeatURL,
		body:   body,
		header: http.Header{"Content-Type": {"application/json"}},
	})
	if err != nil {
		return Verdict{}, err
	}
	defer closeBody(resp.Body)
	if !IsJSON(resp.Header.Get("Content-Type")) {
		return Verdict{}, nil // delivered; a body of another type carries no verdict
	}
	return readVerdict(resp.Body), nil
}

// readVerdict reads at most maxVerdictBytes (plus one, to tell a body that
// is exactly at the cap from one over it). A read error mid-body means the
// bytes are incomplete, so no verdict either.
func readVerdict(r io.Reader) Verdict {
	data, over, err := readCapped(r, maxVerdictBytes)
	if over || err != nil {
		return Verdict{}
	}
	return parseVerdict(data)
}

// parseVerdict extracts the availableUpdates tristate. It reads the key
// exactly (encoding/json would also take "AvailableUpdates") and accepts the
// list only if every entry is an object with a name: half a verdict handed
// to the status writer would clear what it should not, so a malformed one
// counts as none.
func parseVerdict(data []byte) Verdict {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return Verdict{}
	}
	raw, ok := doc["availableUpdates"]
	if !ok {
		return Verdict{}
	}
	var entries []*wire.AvailableUpdate
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return Verdict{}
	}
	updates := make([]wire.AvailableUpdate, 0, len(entries))
	for _, e := range entries {
		if e == nil || e.Name == "" {
			return Verdict{}
		}
		updates = append(updates, *e)
	}
	return Verdict{Present: true, Updates: updates}
}
