package store

import "kubehz.dev/agent/shared/wire"

// counting is a Store that counts the writes that reported a change.
type counting struct {
	*Store
	n int
}

func counted() *counting { return &counting{Store: New()} }

func (c *counting) count(changed bool) bool {
	if changed {
		c.n++
	}
	return changed
}

func (c *counting) Begin(rev int64) bool      { return c.count(c.Store.Begin(rev)) }
func (c *counting) Upsert(a wire.Action) bool { return c.count(c.Store.Upsert(a)) }
func (c *counting) Prune(typ string, keep map[string]bool) bool {
	return c.count(c.Store.Prune(typ, keep))
}
func (c *counting) ClearType(typ string) bool { return c.count(c.Store.ClearType(typ)) }
func (c *counting) Clear() bool               { return c.count(c.Store.Clear()) }

func act(typ, target, status string, rev int64) wire.Action {
	return wire.Action{Type: typ, Target: target, Status: status, Revision: rev}
}
