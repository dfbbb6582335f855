package token

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// errBlank is a file or Secret that exists but holds only whitespace, which
// kubelet can briefly expose mid-rotation; it is not a format error.
var errBlank = errors.New("blank")

func stampOf(fi fs.FileInfo) stamp {
	return stamp{mtime: fi.ModTime(), size: fi.Size(), inode: inode(fi)}
}

// readFile stats before reading: if the file changes in between, the next
// stat differs from the recorded stamp and triggers another read, so a
// rotation is never missed.
func readFile(path string) (Token, stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", stamp{}, fmt.Errorf("agent token file: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", stamp{}, fmt.Errorf("agent token file: %w", err)
	}
	t, err := parse(string(b))
	if err != nil {
		return "", stampOf(fi), fmt.Errorf("agent token file %s: %w", path, err)
	}
	return t, stampOf(fi), nil
}

func readSecret(ctx context.Context, read SecretReader) (Token, error) {
	raw, err := read(ctx)
	if err != nil {
		return "", err
	}
	t, err := parse(raw)
	if err != nil {
		return "", fmt.Errorf("agent token from the Secret: %w", err)
	}
	return t, nil
}

func parse(raw string) (Token, error) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return "", errBlank
	}
	if err := Validate(v); err != nil {
		return "", err
	}
	return Token(v), nil
}
