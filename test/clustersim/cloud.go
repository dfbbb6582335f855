package clustersim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// server is one file of the simulated cloud, as machine-controller's
// simcloud provider writes it when it creates a server for a Machine.
type server struct {
	Machine   string `json:"machine"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
	Hostname  string `json:"hostname"`
	Address   string `json:"address"`
	Kubelet   string `json:"kubelet"`
}

// providerID is the ID the simulated cloud gives the server; a cloud
// controller manager would put it on the Node, and the kubelet does here.
func (s server) providerID() string { return "kubehz-sim:///" + s.UID }

// servers reads the cloud directory: every server that exists now, by the
// UID of its Machine.
func (s *Sim) servers() (map[string]server, error) {
	entries, err := os.ReadDir(s.opts.CloudDir)
	if err != nil {
		return nil, fmt.Errorf("read the cloud: %w", err)
	}
	out := map[string]server{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue // a fault file, or a server being written
		}
		raw, err := os.ReadFile(filepath.Join(s.opts.CloudDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read server %s: %w", name, err)
		}
		var srv server
		if err := json.Unmarshal(raw, &srv); err != nil {
			return nil, fmt.Errorf("server %s: %w", name, err)
		}
		out[srv.UID] = srv
	}
	return out, nil
}

// setFault writes (on) or removes the cloud's fault file kind.<pool>.
func (s *Sim) setFault(kind, pool, content string, on bool) error {
	path := filepath.Join(s.opts.CloudDir, kind+"."+pool)
	if !on {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(path, []byte(content), 0o600)
}
