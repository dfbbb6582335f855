package kube

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountKubeconfig mints a token for namespace/name with the
// TokenRequest API and writes a kubeconfig that authenticates as exactly that
// ServiceAccount, so a binary run with it holds only the RBAC in deploy/.
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, namespace, name, path string) error {
	expiry := int64(24 * 3600)
	tr, err := e.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token for %s/%s: %w", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name}
	cfg.CurrentContext = "test"
	return clientcmd.WriteToFile(*cfg, path)
}

// ServiceAccountConfig is a rest.Config authenticating as namespace/name.
func (e *Env) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	expiry := int64(24 * 3600)
	tr, err := e.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s/%s: %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// ServiceAccountCan asks the apiserver, through a SubjectAccessReview, whether
// the ServiceAccount namespace/name may perform the access described by ra
// (a resource) or nra (a non-resource URL), with the groups a real token of
// that ServiceAccount carries.
func (e *Env) ServiceAccountCan(ctx context.Context, namespace, name string, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  "system:serviceaccount:" + namespace + ":" + name,
		Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		ResourceAttributes:    ra,
		NonResourceAttributes: nra,
	}}
	res, err := e.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}
