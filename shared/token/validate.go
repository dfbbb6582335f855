package token

import (
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every agent token. Configuration uses it to refuse a token
// pasted into a setting that is logged or sent.
const Prefix = "khz_agt_"

const (
	claimPrefix = "khzc_"
	hexDigits   = 64
)

// ErrMalformed marks every format failure, so callers can tell a bad token
// (fatal: a person must fix it) from a failed read (maybe transient).
var ErrMalformed = errors.New("malformed agent token")

// Validate checks the agent token format: "khz_agt_" and 64 lowercase hex
// digits. The reasons name what is wrong but never quote the input, because
// the input is a credential or a near miss of one.
func Validate(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrMalformed)
	case strings.HasPrefix(s, claimPrefix):
		return fmt.Errorf("%w: this is a claim code (%s…), not the agent token (%s…)", ErrMalformed, claimPrefix, Prefix)
	case !strings.HasPrefix(s, Prefix):
		return fmt.Errorf("%w: must start with %s", ErrMalformed, Prefix)
	case len(s) != len(Prefix)+hexDigits:
		return fmt.Errorf("%w: must be %d characters, got %d", ErrMalformed, len(Prefix)+hexDigits, len(s))
	}
	for i := len(Prefix); i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%w: character %d is not a lowercase hex digit", ErrMalformed, i+1)
		}
	}
	return nil
}
