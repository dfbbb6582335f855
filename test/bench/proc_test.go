package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux the harness runs on.
const clockTicks = 100

// procStatus reads one kB field of /proc/<pid>/status, in bytes: VmRSS is
// the resident set now, VmHWM its high-water mark since start.
func procStatus(pid int, field string) (int64, error) {
	return procStatusFile(fmt.Sprintf("/proc/%d/status", pid), field)
}

// procStatusFile reads one "Field: N kB" line of a /proc file, in bytes.
func procStatusFile(path, field string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err != nil {
				return 0, fmt.Errorf("parse %s %q in %s: %w", field, rest, path, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in %s", field, path)
}

// cpuTicks is the CPU time the process has used, user plus system, in
// clock ticks: fields 14 and 15 of /proc/<pid>/stat.
func cpuTicks(pid int) (int64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; count from after it.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state): utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, errors.Join(err1, err2))
	}
	return utime + stime, nil
}
