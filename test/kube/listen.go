package kube

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Listening returns the TCP sockets process pid is listening on, read from
// /proc: its socket inodes matched against the LISTEN rows (state 0A) of
// /proc/net/tcp and tcp6. The agent promises outbound connections only.
func Listening(pid int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			cols := strings.Fields(sc.Text())
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(cols) > 9 && cols[3] == "0A" && inodes[cols[9]] {
				out = append(out, table+" "+cols[1])
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
