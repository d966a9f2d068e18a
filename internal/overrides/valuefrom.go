package overrides

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// ClusterValue returns what s names of cluster: its name, or the value of
// one of its labels or annotations. A label or annotation the cluster does
// not carry is an error naming the cluster and the key: the render of
// that cluster fails rather than send an empty value.
func ClusterValue(c *clusterv1alpha1.Cluster, s *policyv1alpha1.ClusterValueSource) (string, error) {
	switch {
	case s.ClusterName != nil:
		return c.Name, nil
	case s.ClusterLabel != nil:
		v, ok := c.Labels[s.ClusterLabel.Key]
		if !ok {
			return "", fmt.Errorf("valueFrom.clusterLabel: cluster %s has no label %q", c.Name, s.ClusterLabel.Key)
		}
		return v, nil
	case s.ClusterAnnotation != nil:
		v, ok := c.Annotations[s.ClusterAnnotation.Key]
		if !ok {
			return "", fmt.Errorf("valueFrom.clusterAnnotation: cluster %s has no annotation %q", c.Name, s.ClusterAnnotation.Key)
		}
		return v, nil
	}
	return "", fmt.Errorf("valueFrom: names no cluster property")
}

// resolve returns o with every valueFrom replaced by the value it names
// for cluster, so that the overriders apply exactly as if the policy held
// those values: o itself, unchanged, when no overrider uses valueFrom.
// The first source the cluster cannot answer is an error naming the
// overrider.
func resolve(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) (*policyv1alpha1.Overriders, error) {
	if !usesValueFrom(o) {
		return o, nil
	}
	out := *o
	steps := []func(*policyv1alpha1.Overriders, *clusterv1alpha1.Cluster) error{
		resolvePlaintext, resolveImage, resolveCommandArgs, resolveLabels, resolveFields,
	}
	for _, step := range steps {
		if err := step(&out, c); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// usesValueFrom reports whether any overrider of o takes a value from the
// cluster, which makes the rule's result differ per cluster.
func usesValueFrom(o *policyv1alpha1.Overriders) bool {
	found := false
	walkSources(o, func(*policyv1alpha1.ClusterValueSource) { found = true })
	return found
}

// walkSources calls f with every valueFrom source of o.
func walkSources(o *policyv1alpha1.Overriders, f func(*policyv1alpha1.ClusterValueSource)) {
	each := func(s *policyv1alpha1.ClusterValueSource) {
		if s != nil {
			f(s)
		}
	}
	for i := range o.Plaintext {
		each(o.Plaintext[i].ValueFrom)
	}
	for i := range o.ImageOverrider {
		each(o.ImageOverrider[i].ValueFrom)
	}
	for _, list := range [][]policyv1alpha1.CommandArgsOverrider{o.CommandOverrider, o.ArgsOverrider} {
		for i := range list {
			for k := range list[i].ValueFrom {
				each(&list[i].ValueFrom[k])
			}
		}
	}
	for _, list := range [][]policyv1alpha1.LabelAnnotationOverrider{o.LabelsOverrider, o.AnnotationsOverrider} {
		for i := range list {
			for _, k := range slices.Sorted(maps.Keys(list[i].ValueFrom)) {
				s := list[i].ValueFrom[k]
				each(&s)
			}
		}
	}
	for i := range o.FieldOverrider {
		for k := range o.FieldOverrider[i].JSON {
			each(o.FieldOverrider[i].JSON[k].ValueFrom)
		}
		for k := range o.FieldOverrider[i].YAML {
			each(o.FieldOverrider[i].YAML[k].ValueFrom)
		}
	}
}

// jsonString is the cluster value s names, as a JSON string.
func jsonString(c *clusterv1alpha1.Cluster, s *policyv1alpha1.ClusterValueSource) (json.RawMessage, error) {
	v, err := ClusterValue(c, s)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func resolvePlaintext(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) error {
	o.Plaintext = slices.Clone(o.Plaintext)
	for i := range o.Plaintext {
		p := &o.Plaintext[i]
		if p.ValueFrom == nil {
			continue
		}
		v, err := jsonString(c, p.ValueFrom)
		if err != nil {
			return overriderErr("plaintext", i, err)
		}
		p.Value, p.ValueFrom = v, nil
	}
	return nil
}

// resolveImage sets each image overrider's value from the cluster. A Tag
// value that is neither a tag nor a digest is an error here, where
// Karmada's overrider would leave the image silently unchanged; ValueFrom
// is kept so that imageOp refuses an image the value made unparsable.
func resolveImage(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) error {
	o.ImageOverrider = slices.Clone(o.ImageOverrider)
	for i := range o.ImageOverrider {
		io := &o.ImageOverrider[i]
		if io.ValueFrom == nil {
			continue
		}
		v, err := ClusterValue(c, io.ValueFrom)
		if err != nil {
			return overriderErr("imageOverrider", i, err)
		}
		if io.Component == policyv1alpha1.Tag && !anchoredTagRegexp.MatchString(v) && !anchoredDigestRegexp.MatchString(v) {
			return overriderErr("imageOverrider", i, fmt.Errorf("valueFrom: cluster %s gives %q, which is neither an image tag nor a digest", c.Name, v))
		}
		io.Value = v // ValueFrom stays set: imageOp checks the resulting image parses
	}
	return nil
}

func resolveCommandArgs(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) error {
	for _, l := range []struct {
		name string
		list *[]policyv1alpha1.CommandArgsOverrider
	}{{"commandOverrider", &o.CommandOverrider}, {"argsOverrider", &o.ArgsOverrider}} {
		*l.list = slices.Clone(*l.list)
		for i := range *l.list {
			co := &(*l.list)[i]
			if len(co.ValueFrom) == 0 {
				continue
			}
			values := slices.Clone(co.Value)
			for k := range co.ValueFrom {
				v, err := ClusterValue(c, &co.ValueFrom[k])
				if err != nil {
					return overriderErr(l.name, i, fmt.Errorf("valueFrom[%d]: %w", k, err))
				}
				values = append(values, v)
			}
			co.Value, co.ValueFrom = values, nil
		}
	}
	return nil
}

// resolveLabels sets the valueFrom keys of labels and annotations
// overriders; a label value from the cluster must be a valid label value.
func resolveLabels(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) error {
	for _, l := range []struct {
		name  string
		list  *[]policyv1alpha1.LabelAnnotationOverrider
		label bool
	}{{"labelsOverrider", &o.LabelsOverrider, true}, {"annotationsOverrider", &o.AnnotationsOverrider, false}} {
		*l.list = slices.Clone(*l.list)
		for i := range *l.list {
			lo := &(*l.list)[i]
			if len(lo.ValueFrom) == 0 {
				continue
			}
			values := maps.Clone(lo.Value)
			if values == nil {
				values = map[string]string{}
			}
			for _, key := range slices.Sorted(maps.Keys(lo.ValueFrom)) {
				s := lo.ValueFrom[key]
				v, err := ClusterValue(c, &s)
				if err == nil && l.label {
					if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
						err = fmt.Errorf("cluster %s gives %q, not a valid label value: %s", c.Name, v, msgs[0])
					}
				}
				if err != nil {
					return overriderErr(l.name, i, fmt.Errorf("valueFrom[%s]: %w", key, err))
				}
				values[key] = v
			}
			lo.Value, lo.ValueFrom = values, nil
		}
	}
	return nil
}

func resolveFields(o *policyv1alpha1.Overriders, c *clusterv1alpha1.Cluster) error {
	o.FieldOverrider = slices.Clone(o.FieldOverrider)
	for i := range o.FieldOverrider {
		fo := &o.FieldOverrider[i]
		fo.JSON = slices.Clone(fo.JSON)
		for k := range fo.JSON {
			if err := resolveRaw(c, &fo.JSON[k].Value, &fo.JSON[k].ValueFrom); err != nil {
				return overriderErr("fieldOverrider", i, fmt.Errorf("json[%d]: %w", k, err))
			}
		}
		fo.YAML = slices.Clone(fo.YAML)
		for k := range fo.YAML {
			if err := resolveRaw(c, &fo.YAML[k].Value, &fo.YAML[k].ValueFrom); err != nil {
				return overriderErr("fieldOverrider", i, fmt.Errorf("yaml[%d]: %w", k, err))
			}
		}
	}
	return nil
}

// resolveRaw sets *value to the JSON string *from names, when it is set.
func resolveRaw(c *clusterv1alpha1.Cluster, value *json.RawMessage, from **policyv1alpha1.ClusterValueSource) error {
	if *from == nil {
		return nil
	}
	v, err := jsonString(c, *from)
	if err != nil {
		return err
	}
	*value, *from = v, nil
	return nil
}
