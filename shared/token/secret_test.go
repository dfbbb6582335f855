package token

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
)

func TestFromSecret_ReadsAgentTokenKey(t *testing.T) {
	const secretData = "do-not-print-this-secret-data"
	secret := func(data map[string][]byte) runtime.Object {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "kubehz-agent"},
			Data:       data,
		}
	}
	cases := []struct {
		name    string
		objects []runtime.Object
		want    string
		wantErr []string // substrings the error must carry
	}{
		{
			name:    "key present",
			objects: []runtime.Object{secret(map[string][]byte{"agent-token": []byte(valid(7) + "\n")})},
			want:    valid(7) + "\n",
		},
		{
			name:    "secret missing",
			wantErr: []string{"kubehz-system/kubehz-agent", "mount", "grant get"},
		},
		{
			name:    "key missing",
			objects: []runtime.Object{secret(map[string][]byte{"other": []byte(secretData)})},
			wantErr: []string{"kubehz-system/kubehz-agent", "agent-token"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			read := FromSecret(kubeapitest.Getter[*kubeapi.Secret](fake.NewClientset(tc.objects...).CoreV1().Secrets("kubehz-system")), "kubehz-system", "kubehz-agent")
			got, err := read(context.Background())
			if tc.wantErr == nil {
				if err != nil || got != tc.want {
					t.Fatalf("read = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("read = %q, want an error", got)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if strings.Contains(err.Error(), secretData) {
				t.Errorf("error %q leaks Secret data", err)
			}
		})
	}
}
