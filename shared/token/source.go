package token

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

type origin int

const (
	originNone origin = iota
	originFile
	originSecret
)

// stamp identifies one version of the token file. Kubelet rotates a Secret
// volume by swapping a symlink, so a new version can keep the old size and
// even mtime; the inode of the resolved target is what surely changes.
type stamp struct {
	mtime time.Time
	size  int64
	inode uint64
}

// Source resolves the agent token (environment, then file, then Secret) and
// keeps the file's token fresh across rotations without a restart. It is safe
// for concurrent use.
type Source struct {
	// The token fields are pointers because fmt prints an unexported field
	// by reflection, skipping Token's redacting methods, and so would print a
	// Token field raw; a pointer to a string it prints only as an address, at
	// any depth and with any verb. nil means no token.
	env *Token // never changes

	file   string
	secret SecretReader
	log    *slog.Logger

	// sem serialises resolution; a channel rather than a mutex so a caller
	// waiting behind a slow Secret GET can still give up on its context.
	sem chan struct{}

	// stale is atomic so Invalidate never waits behind a slow Secret GET.
	stale atomic.Bool

	// Guarded by sem.
	cached   *Token
	from     origin
	seen     stamp
	lastWarn string
}

// Options are a Source's places besides the file, and its log; every field
// may be left zero.
type Options struct {
	FromEnv Token        // the token set in the environment; "": none
	Secret  SecretReader // the API fallback; nil: none
	Log     *slog.Logger // nil: discard
}

// NewSource returns a Source that reads the token file at file.
func NewSource(file string, opts Options) *Source {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{file: file, secret: opts.Secret, log: log, sem: make(chan struct{}, 1)}
	if v := Token(strings.TrimSpace(opts.FromEnv.Reveal())); v != "" {
		s.env = &v
	}
	return s
}

// Invalidate makes the next Token re-read the file or re-fetch the Secret
// even if nothing looks changed. Call it after the platform answers 401.
func (s *Source) Invalidate() { s.stale.Store(true) }

// Token returns the current token. An error means no valid token could be
// found at all; once one was found, later read problems are logged and the
// last good token is returned instead.
func (s *Source) Token(ctx context.Context) (Token, error) {
	if s.env != nil {
		if err := Validate(s.env.Reveal()); err != nil {
			return "", fmt.Errorf("agent token from the environment: %w", err)
		}
		return *s.env, nil
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-s.sem }()

	forced := s.stale.Swap(false)
	switch s.from {
	case originFile:
		return s.refreshFile(forced), nil
	case originSecret:
		if t, ok := s.fileFilled(); ok {
			return t, nil
		}
		if forced {
			return s.refreshSecret(ctx), nil
		}
		return s.last(), nil
	}
	return s.resolve(ctx)
}

// resolve finds the first token. A missing or blank file is normal (the
// Secret may not be mounted) and falls through; a malformed one is not.
func (s *Source) resolve(ctx context.Context) (Token, error) {
	t, st, fileErr := readFile(s.file)
	switch {
	case fileErr == nil:
		s.keep(t, originFile, st)
		return t, nil
	case errors.Is(fileErr, ErrMalformed):
		return "", fileErr
	}
	s.log.Debug("Agent token file not usable, trying the Secret", "path", Redact(s.file), "err", fileErr)
	if s.secret == nil {
		return "", fmt.Errorf("no agent token: %w, and no Secret fallback is configured", fileErr)
	}
	t, err := readSecret(ctx, s.secret)
	if err != nil {
		return "", fmt.Errorf("no agent token: %w; %w", fileErr, err)
	}
	s.keep(t, originSecret, stamp{})
	return t, nil
}

// refreshFile re-reads the file when it changed or after Invalidate.
func (s *Source) refreshFile(forced bool) Token {
	if !forced {
		fi, err := os.Stat(s.file)
		if err != nil {
			s.warn(fmt.Errorf("agent token file %s: %w", s.file, err))
			return s.last()
		}
		if stampOf(fi) == s.seen {
			return s.last()
		}
	}
	t, st, err := readFile(s.file)
	if err != nil {
		// Remember the bad version so it is read and reported once, not on
		// every call, until it changes again.
		s.seen = st
		s.warn(err)
		return s.last()
	}
	s.keep(t, originFile, st)
	return t
}

// fileFilled hands over from the Secret to the token file once the file
// holds a valid token: the file comes first, and one that was missing or
// blank at start (kubelet can show it blank mid-rotation) takes over when it
// fills. A version that holds no valid token is read once, then again only
// when it changes.
func (s *Source) fileFilled() (Token, bool) {
	fi, err := os.Stat(s.file)
	if err != nil || stampOf(fi) == s.seen {
		return "", false
	}
	t, st, err := readFile(s.file)
	s.seen = st
	if err != nil {
		if errors.Is(err, ErrMalformed) {
			s.warn(err)
		}
		return "", false
	}
	s.log.Info("Agent token file holds a token; reading it from there instead of the Secret", "path", Redact(s.file))
	s.keep(t, originFile, st)
	return t, true
}

func (s *Source) refreshSecret(ctx context.Context) Token {
	t, err := readSecret(ctx, s.secret)
	if err != nil {
		s.warn(err)
		return s.last()
	}
	s.keep(t, originSecret, stamp{})
	return t
}

func (s *Source) keep(t Token, from origin, st stamp) {
	if s.cached != nil && t != *s.cached {
		s.log.Info("Agent token rotated", "source", from.String())
	}
	s.cached, s.from, s.seen, s.lastWarn = &t, from, st, ""
}

// last is the last good token; callers hold sem.
func (s *Source) last() Token {
	if s.cached == nil {
		return ""
	}
	return *s.cached
}

// warn logs each distinct problem once, so a vanished file does not flood
// the log on every beat. Errors built here never hold the token.
func (s *Source) warn(err error) {
	if msg := err.Error(); msg != s.lastWarn {
		s.lastWarn = msg
		s.log.Warn("Keeping the last good agent token", "err", err)
	}
}

func (o origin) String() string {
	switch o {
	case originFile:
		return "file"
	case originSecret:
		return "secret"
	}
	return "none"
}
