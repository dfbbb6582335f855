package bench

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kubehz.dev/agent/test/kube"
)

// deployed is the environment deploy/actor gives each binary's container,
// read from the rendered manifests so the harness runs what ships: the
// ConfigMaps of envFrom, the literal env, and the memory limit the downward
// API passes as KUBEHZ_MEMORY_LIMIT. The pod name is each replica's own.
type deployed struct{ observer, actor []string }

func deployedEnv(root string) (deployed, error) {
	objs, err := kube.Render(filepath.Join(root, "deploy", "actor"))
	if err != nil {
		return deployed{}, err
	}
	configMaps := map[string]map[string]string{}
	deployments := map[string]*appsv1.Deployment{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			configMaps[o.GetName()] = data
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				return deployed{}, err
			}
			deployments[d.Name] = &d
		}
	}
	var out deployed
	for name, into := range map[string]*[]string{"observer": &out.observer, "actor": &out.actor} {
		d, ok := deployments[name]
		if !ok || len(d.Spec.Template.Spec.Containers) == 0 {
			return deployed{}, fmt.Errorf("deploy/actor renders no Deployment %q with a container", name)
		}
		if *into, err = containerEnv(d.Spec.Template.Spec.Containers[0], d.Namespace, configMaps); err != nil {
			return deployed{}, fmt.Errorf("Deployment %s: %w", name, err)
		}
	}
	return out, nil
}

func containerEnv(c corev1.Container, namespace string, configMaps map[string]map[string]string) ([]string, error) {
	var env []string
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			return nil, fmt.Errorf("envFrom other than a ConfigMap")
		}
		data, ok := configMaps[from.ConfigMapRef.Name]
		if !ok {
			return nil, fmt.Errorf("envFrom ConfigMap %s is not rendered", from.ConfigMapRef.Name)
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			env = append(env, k+"="+data[k])
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			limit := c.Resources.Limits.Memory()
			if limit.IsZero() {
				return nil, fmt.Errorf("%s refers to a memory limit the container does not set", e.Name)
			}
			env = append(env, e.Name+"="+strconv.FormatInt(limit.Value(), 10))
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+namespace)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			// POD_NAME: set per replica.
		default:
			return nil, fmt.Errorf("env %s comes from a source the harness does not emulate", e.Name)
		}
	}
	return env, nil
}
