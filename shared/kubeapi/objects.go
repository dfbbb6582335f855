package kubeapi

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The kinds below are few and small (one ConfigMap, one Lease, the
// identity Secret, the kube-system pods, the CSRs), so they travel as JSON
// and decode into these structs, which name only the fields the agent
// reads or writes; the apiserver's other fields are ignored on the way in.

// ConfigMap is a v1 ConfigMap.
type ConfigMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

// ConfigMapList is a v1 ConfigMapList.
type ConfigMapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ConfigMap `json:"items"`
}

// Secret is a v1 Secret.
type Secret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Immutable         *bool             `json:"immutable,omitempty"`
	Data              map[string][]byte `json:"data,omitempty"`
	Type              string            `json:"type,omitempty"`
}

// SecretTypeOpaque is the type of a Secret of arbitrary keys.
const SecretTypeOpaque = "Opaque"

// SecretList is a v1 SecretList.
type SecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Secret `json:"items"`
}

// Lease is a coordination.k8s.io/v1 Lease.
type Lease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              LeaseSpec `json:"spec,omitempty"`
}

// LeaseSpec is the part of a Lease's spec that says who holds it and until
// when.
type LeaseSpec struct {
	HolderIdentity       *string           `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds,omitempty"`
	RenewTime            *metav1.MicroTime `json:"renewTime,omitempty"`
}

// LeaseList is a coordination.k8s.io/v1 LeaseList.
type LeaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Lease `json:"items"`
}

// CertificateSigningRequest is a certificates.k8s.io/v1
// CertificateSigningRequest as the health view reads it.
type CertificateSigningRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            CSRStatus `json:"status,omitempty"`
}

// CSRStatus is the part of a CSR's status the health view reads.
type CSRStatus struct {
	Conditions  []Condition `json:"conditions,omitempty"`
	Certificate []byte      `json:"certificate,omitempty"`
}

// Conditions of a CertificateSigningRequest.
const (
	CertificateApproved = "Approved"
	CertificateDenied   = "Denied"
	CertificateFailed   = "Failed"
)

// CertificateSigningRequestList is a certificates.k8s.io/v1
// CertificateSigningRequestList.
type CertificateSigningRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CertificateSigningRequest `json:"items"`
}

// Pod is a v1 Pod as the health view reads a control-plane static pod.
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            PodStatus `json:"status,omitempty"`
}

// PodStatus is the part of a pod's status the health view reads.
type PodStatus struct {
	Phase      string      `json:"phase,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// PodList is a v1 PodList.
type PodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pod `json:"items"`
}

// Values of pod phases, and of condition types and statuses, that the
// observer compares against.
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"

	PodReady  = "Ready"
	NodeReady = "Ready"

	ConditionTrue  = "True"
	ConditionFalse = "False"
)

// DeepCopyInto copies c into out.
func (c *ConfigMap) DeepCopyInto(out *ConfigMap) {
	out.TypeMeta, out.Data = c.TypeMeta, maps.Clone(c.Data)
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopyInto copies s into out.
func (s *Secret) DeepCopyInto(out *Secret) {
	out.TypeMeta, out.Type, out.Immutable = s.TypeMeta, s.Type, clonePtr(s.Immutable)
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Data = nil
	if s.Data != nil {
		out.Data = make(map[string][]byte, len(s.Data))
		for k, v := range s.Data {
			out.Data[k] = slices.Clone(v)
		}
	}
}

// DeepCopyInto copies l into out.
func (l *Lease) DeepCopyInto(out *Lease) {
	out.TypeMeta = l.TypeMeta
	l.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = LeaseSpec{HolderIdentity: clonePtr(l.Spec.HolderIdentity), LeaseDurationSeconds: clonePtr(l.Spec.LeaseDurationSeconds),
		RenewTime: l.Spec.RenewTime.DeepCopy()}
}

// DeepCopyInto copies c into out.
func (c *CertificateSigningRequest) DeepCopyInto(out *CertificateSigningRequest) {
	out.TypeMeta = c.TypeMeta
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = CSRStatus{Conditions: slices.Clone(c.Status.Conditions), Certificate: slices.Clone(c.Status.Certificate)}
}

// DeepCopyInto copies p into out.
func (p *Pod) DeepCopyInto(out *Pod) {
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = PodStatus{Phase: p.Status.Phase, Conditions: slices.Clone(p.Status.Conditions)}
}

// DeepCopy copies c; defined so that the embedded metadata's is not promoted.
func (c *ConfigMap) DeepCopy() *ConfigMap { return deepCopy(c) }

// DeepCopyObject implements runtime.Object.
func (c *ConfigMap) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopy copies s; defined so that the embedded metadata's is not promoted.
func (s *Secret) DeepCopy() *Secret { return deepCopy(s) }

// DeepCopyObject implements runtime.Object.
func (s *Secret) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// DeepCopy copies l; defined so that the embedded metadata's is not promoted.
func (l *Lease) DeepCopy() *Lease { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *Lease) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopy copies c; defined so that the embedded metadata's is not promoted.
func (c *CertificateSigningRequest) DeepCopy() *CertificateSigningRequest { return deepCopy(c) }

// DeepCopyObject implements runtime.Object.
func (c *CertificateSigningRequest) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopy copies p; defined so that the embedded metadata's is not promoted.
func (p *Pod) DeepCopy() *Pod { return deepCopy(p) }

// DeepCopyObject implements runtime.Object.
func (p *Pod) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies l into out; defined, as DeepCopy is, so that the
// embedded list metadata's is not promoted in its name.
func (l *ConfigMapList) DeepCopyInto(out *ConfigMapList) {
	*out = ConfigMapList{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy(), Items: copyItems(l.Items)}
}

// DeepCopy copies l.
func (l *ConfigMapList) DeepCopy() *ConfigMapList { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *ConfigMapList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies l into out; defined, as DeepCopy is, so that the
// embedded list metadata's is not promoted in its name.
func (l *SecretList) DeepCopyInto(out *SecretList) {
	*out = SecretList{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy(), Items: copyItems(l.Items)}
}

// DeepCopy copies l.
func (l *SecretList) DeepCopy() *SecretList { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *SecretList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies l into out; defined, as DeepCopy is, so that the
// embedded list metadata's is not promoted in its name.
func (l *LeaseList) DeepCopyInto(out *LeaseList) {
	*out = LeaseList{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy(), Items: copyItems(l.Items)}
}

// DeepCopy copies l.
func (l *LeaseList) DeepCopy() *LeaseList { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *LeaseList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies l into out; defined, as DeepCopy is, so that the
// embedded list metadata's is not promoted in its name.
func (l *CertificateSigningRequestList) DeepCopyInto(out *CertificateSigningRequestList) {
	*out = CertificateSigningRequestList{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy(), Items: copyItems(l.Items)}
}

// DeepCopy copies l.
func (l *CertificateSigningRequestList) DeepCopy() *CertificateSigningRequestList { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *CertificateSigningRequestList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies l into out; defined, as DeepCopy is, so that the
// embedded list metadata's is not promoted in its name.
func (l *PodList) DeepCopyInto(out *PodList) {
	*out = PodList{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy(), Items: copyItems(l.Items)}
}

// DeepCopy copies l.
func (l *PodList) DeepCopy() *PodList { return deepCopy(l) }

// DeepCopyObject implements runtime.Object.
func (l *PodList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// copier is a pointer to a kind of this package.
type copier[T any] interface {
	*T
	DeepCopyInto(*T)
}

func deepCopy[T any, P copier[T]](in P) P {
	out := P(new(T))
	in.DeepCopyInto(out)
	return out
}

// copyItems deep-copies a list's items.
func copyItems[T any, P copier[T]](in []T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i := range in {
		P(&in[i]).DeepCopyInto(&out[i])
	}
	return out
}
