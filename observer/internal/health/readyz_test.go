package health

import (
	"reflect"
	"testing"
)

// Bodies as kube-apiserver writes them for GET /readyz?verbose.
const (
	readyzPassing = `[+]ping ok
[+]log ok
[+]etcd ok
[+]etcd-readiness ok
[+]informer-sync ok
[+]poststarthook/start-apiserver-admission-initializer ok
[+]poststarthook/rbac/bootstrap-roles ok
[+]shutdown ok
readyz check passed
`
	readyzEtcdDown = `[+]ping ok
[+]log ok
[-]etcd failed: reason withheld
[-]etcd-readiness failed: reason withheld
[+]informer-sync ok
[+]poststarthook/start-apiserver-admission-initializer ok
[+]poststarthook/rbac/bootstrap-roles ok
[+]shutdown ok
readyz check failed
`
	readyzShuttingDown = `[+]ping ok
[+]log ok
[+]etcd ok
[+]etcd-readiness ok
[+]informer-sync ok
[+]poststarthook/start-apiserver-admission-initializer ok
[+]poststarthook/rbac/bootstrap-roles ok
[-]shutdown failed: reason withheld
readyz check failed
`
)

func TestParseReadyz_ReadsRealVerboseBodiesAndRejectsTheRest(t *testing.T) {
	healthyChecks := map[string]bool{
		"ping": true, "log": true, "etcd": true, "etcd-readiness": true, "informer-sync": true,
		"poststarthook/start-apiserver-admission-initializer": true,
		"poststarthook/rbac/bootstrap-roles":                  true, "shutdown": true,
	}
	with := func(overrides map[string]bool) map[string]bool {
		out := map[string]bool{}
		for k, v := range healthyChecks {
			out[k] = v
		}
		for k, v := range overrides {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name    string
		body    string
		want    Readyz
		wantErr bool
	}{
		{name: "passing", body: readyzPassing, want: Readyz{Passed: true, Checks: healthyChecks}},
		{name: "etcd down", body: readyzEtcdDown,
			want: Readyz{Checks: with(map[string]bool{"etcd": false, "etcd-readiness": false})}},
		{name: "shutting down, etcd fine", body: readyzShuttingDown,
			want: Readyz{Checks: with(map[string]bool{"shutdown": false})}},
		{name: "CRLF line ends", body: "[+]ping ok\r\n[-]etcd failed: reason withheld\r\nreadyz check failed\r\n",
			want: Readyz{Checks: map[string]bool{"ping": true, "etcd": false}}},
		{name: "no trailing newline", body: "[+]etcd ok\nreadyz check passed",
			want: Readyz{Passed: true, Checks: map[string]bool{"etcd": true}}},
		{name: "excluded check says nothing", body: "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n",
			want: Readyz{Passed: true, Checks: map[string]bool{"ping": true}}},
		{name: "no etcd check", body: "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n",
			want: Readyz{Passed: true, Checks: map[string]bool{"ping": true, "shutdown": true}}},
		{name: "non-verbose ok", body: "ok", want: Readyz{Passed: true, Checks: map[string]bool{}}},
		{name: "empty", body: "", wantErr: true},
		{name: "truncated before the verdict", body: "[+]ping ok\n[+]etcd ok\n[+]shut", wantErr: true},
		{name: "livez, not readyz", body: "[+]ping ok\n[+]etcd ok\nlivez check passed\n", wantErr: true},
		{name: "403 Status JSON", body: `{"kind":"Status","apiVersion":"v1","status":"Failure",` +
			`"message":"forbidden: User \"system:anonymous\" cannot get path \"/readyz\"","reason":"Forbidden","code":403}`,
			wantErr: true},
		{name: "HTML from a proxy", body: "<html><body><h1>502 Bad Gateway</h1></body></html>", wantErr: true},
		{name: "ok with garbage", body: "ok then", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReadyz([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
