package execute

import "kubehz.dev/agent/shared/wire"

// limited reports that the local limits replaced part of the document's
// healing policy, and logs it when that is news. It concerns no Machine, so
// it is no Event.
func (e *Executor) limited(a *wire.Action) {
	if a == nil {
		return
	}
	if prev, ok := e.reported(wire.ActionHeal)[a.Target]; !ok || prev != *a {
		e.Log.Warn("The desired healing policy asks for more than this cluster's local limits; healing within them",
			"detail", a.Detail, "revision", a.Revision)
	}
	e.Store.Upsert(*a)
}
