package execute

import (
	"fmt"

	"kubehz.dev/agent/shared/wire"
)

func eventMessage(a wire.Action) string {
	return fmt.Sprintf("desired revision %d: %s %s: %s", a.Revision, a.Type, a.Status, a.Detail)
}
