// Command release-manifests writes install-observer.yaml, install-actor.yaml,
// install-register.yaml and SHA256SUMS for one release, with both images pinned by digest:
//
//	release-manifests -version v1.2.3 -observer-digest sha256:… -actor-digest sha256:… -out bin/release
//
// `make release-manifests` and the release workflow run it. It exits non-zero
// without writing anything when the version is not a release tag or a digest
// is missing or malformed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/releasemanifests"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "release-manifests:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("release-manifests", flag.ContinueOnError)
	flags.SetOutput(stderr)
	version := flags.String("version", "", "the release tag, e.g. v1.2.3")
	observer := flags.String("observer-digest", "", "digest of the pushed observer image, sha256:…")
	actor := flags.String("actor-digest", "", "digest of the pushed actor image, sha256:…")
	out := flags.String("out", "bin/release", "directory to write the manifests and SHA256SUMS into")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", flags.Args())
	}
	root, err := kube.RepoRoot()
	if err != nil {
		return err
	}
	files, err := releasemanifests.Write(releasemanifests.Options{
		Root:    root,
		Version: *version,
		Digests: map[string]string{"observer": *observer, "actor": *actor},
	}, *out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, filepath.Join(*out, f))
	}
	return nil
}
