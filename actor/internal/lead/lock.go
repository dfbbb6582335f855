package lead

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// recordingLock is the elector's Lease lock, seen from Run: its writes
// naming us win and renew the term, a release is held until the term's work
// has stopped, and every read or write tells who holds the Lease.
//
// Once the term was won and has gone RenewDeadline without a renewal, the
// lock refuses the elector's own requests too, without sending them: the
// process exits on a lost lease and never campaigns again, so after that
// moment there is nothing it may still ask the apiserver. client-go's
// elector then gives up at its renew deadline; its release, refused the same
// way, is not needed, since the successor has the Lease or will at expiry.
type recordingLock struct {
	resourcelock.Interface
	identity      string
	term          *term
	now           func() time.Time
	beforeRelease func()
	onHolder      func(string)
}

// over reports a term that was won and is no longer live.
func (l *recordingLock) over() bool {
	return l.term != nil && l.term.won() && !l.term.live(l.now())
}

// Get is a standby's read of the Lease, which the elector makes anyway:
// the holder comes at no extra request. A leader renews without reading,
// so Update tells its own writes.
func (l *recordingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if l.over() {
		return nil, nil, ErrTermOver
	}
	r, raw, err := l.Interface.Get(ctx)
	if err == nil && r != nil {
		l.holder(r.HolderIdentity)
	}
	return r, raw, err
}

// errNoLease is the elector's Create, refused: the actor never creates its
// Lease.
var errNoLease = errors.New("the actor's Lease does not exist, and the actor never creates it; deploy/actor ships it")

// Create is the elector's write when its Get found no Lease. deploy/actor
// ships the Lease, and its Role grants no create, since a Role cannot limit
// create to one name. Refusing it here too names a missing Lease for what
// it is, where the apiserver's answer would be a Forbidden every
// RetryPeriod, and keeps it refused under a Role widened by hand.
func (l *recordingLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	return fmt.Errorf("%w (%s)", errNoLease, l.Describe())
}

// Update is called by the elector to take the Lease, to renew it and, with
// an empty holder, to release it. Nothing is sent once the term is over. A
// successful write naming us is how the term is won and renewed: the
// elector's own success, with no need to read its log or events.
func (l *recordingLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if r.HolderIdentity == "" && l.beforeRelease != nil {
		l.beforeRelease()
	}
	if l.over() {
		return ErrTermOver
	}
	sent := l.now()
	if err := l.Interface.Update(ctx, r); err != nil {
		return err
	}
	if r.HolderIdentity != "" && r.HolderIdentity == l.identity && l.term != nil {
		l.term.renewed(sent)
	}
	l.holder(r.HolderIdentity)
	return nil
}

func (l *recordingLock) holder(h string) {
	if l.onHolder != nil {
		l.onHolder(h)
	}
}
