package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run probes now and every interval, and keeps the informers running until
// ctx is done. It returns nil on cancel, after every goroutine it started has
// stopped. Call it once.
func (m *Monitor) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { m.podsCtrl.RunWithContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-m.podsChanged:
				m.publish()
			case <-m.certsChanged:
				m.publishCerts()
			}
		}
	})

	// The timer runs during each probe, so probes start every interval
	// however long one takes (up to the interval).
	timer := m.clk.NewTimer(m.interval)
	defer timer.Stop()
	p := &prober{m: m, wg: &wg,
		readyz: onceLog{
			failed:    "Readyz probe failed; apiserver and etcd omitted",
			recovered: "Readyz probe answers again",
		},
		serving: onceLog{
			failed:    "Apiserver serving certificate unreadable; the expiries read in the past hour still count",
			recovered: "Apiserver serving certificate readable again",
		},
		csrGate: onceLog{
			failed:    "CertificateSigningRequests unreadable; their certificates left out of the expiry",
			recovered: "CertificateSigningRequests readable; watching them for certificate expiry",
		},
	}
	for {
		p.probe(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C():
			timer.Reset(m.interval)
		}
	}
}

// prober is the state of one Run's probe loop; only that loop touches it.
type prober struct {
	m                        *Monitor
	wg                       *sync.WaitGroup
	readyz, serving, csrGate onceLog
	csrStarted               bool
}

func (p *prober) probe(ctx context.Context) {
	m := p.m
	rz, err := probeReadyz(ctx, m.readyz)
	if ctx.Err() != nil {
		return // a cancelled probe says nothing about the apiserver
	}
	p.readyz.note(m.log, err)
	m.mu.Lock()
	m.lastReadyz = rz
	m.mu.Unlock()
	m.publish()

	leaf, err := servingLeaf(ctx, m.restCfg)
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, errPlainHTTP) {
		err = nil
	}
	p.serving.note(m.log, err)
	m.mu.Lock()
	m.serving.note(leaf, m.clk.Now())
	m.mu.Unlock()

	if !p.csrStarted {
		p.startCSRs(ctx)
	}
	// Also catches the earliest certificate expiring, which no object
	// change announces.
	m.publishCerts()
}

// startCSRs starts the CSR informer once a single List shows the read is
// allowed, so a missing permission or API costs one request per interval
// instead of a reflector's retry loop.
func (p *prober) startCSRs(ctx context.Context) {
	m := p.m
	probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := m.csrReader.List(probeCtx, metav1.ListOptions{Limit: 1})
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		err = fmt.Errorf("list CertificateSigningRequests: %w", err)
	}
	p.csrGate.note(m.log, err)
	if err != nil {
		return
	}
	store, ctrl := m.csrInformer()
	p.wg.Go(func() { ctrl.RunWithContext(ctx) })
	m.mu.Lock()
	m.csrs = store
	m.mu.Unlock()
	p.csrStarted = true
}

// onceLog logs a failure once per distinct error, and the recovery once.
type onceLog struct {
	failed, recovered string // log messages
	last              string // the error last logged; "" while healthy
}

func (o *onceLog) note(log *slog.Logger, err error) {
	switch {
	case err == nil && o.last != "":
		log.Info(o.recovered)
		o.last = ""
	case err != nil && err.Error() != o.last:
		log.Warn(o.failed, "err", err)
		o.last = err.Error()
	}
}
