package overrides

import (
	"errors"
	"strings"
	"testing"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

const (
	hex64 = "50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c"
	dgst  = "sha256:" + hex64
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		name, in string
		want     Image
		str      string // String() of the parsed image
	}{
		{"bare name stays bare", "nginx", Image{Repository: "nginx"}, "nginx"},
		{"tag", "nginx:1.19", Image{Repository: "nginx", Tag: "1.19"}, "nginx:1.19"},
		{"library image keeps its registry and path", "docker.io/library/nginx:1.19",
			Image{Registry: "docker.io", Repository: "library/nginx", Tag: "1.19"}, "docker.io/library/nginx:1.19"},
		{"registry with port and digest", "registry.example.com:5000/team/app@" + dgst,
			Image{Registry: "registry.example.com:5000", Repository: "team/app", Digest: dgst}, "registry.example.com:5000/team/app@" + dgst},
		{"localhost with port", "localhost:5000/foo:v1", Image{Registry: "localhost:5000", Repository: "foo", Tag: "v1"}, "localhost:5000/foo:v1"},
		{"localhost alone is a registry", "localhost/app", Image{Registry: "localhost", Repository: "app"}, "localhost/app"},
		{"first segment without dot or colon is no registry", "myorg/app:3", Image{Repository: "myorg/app", Tag: "3"}, "myorg/app:3"},
		{"underscore org", "my_org/app", Image{Repository: "my_org/app"}, "my_org/app"},
		{"ipv6 registry", "[::1]:5000/app:1", Image{Registry: "[::1]:5000", Repository: "app", Tag: "1"}, "[::1]:5000/app:1"},
		{"uppercase registry is allowed", "Registry.Example.com/app:1", Image{Registry: "Registry.Example.com", Repository: "app", Tag: "1"}, "Registry.Example.com/app:1"},
		{"tag and digest keep only the tag", "quay.io/org/app:v2@" + dgst,
			Image{Registry: "quay.io", Repository: "org/app", Tag: "v2"}, "quay.io/org/app:v2"},
		{"sha512 digest", "app@sha512:" + strings.Repeat("ab", 64), Image{Repository: "app", Digest: "sha512:" + strings.Repeat("ab", 64)}, "app@sha512:" + strings.Repeat("ab", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseImage(tt.in)
			if err != nil {
				t.Fatalf("ParseImage(%q) error = %v; want nil", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseImage(%q) = %+v; want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("ParseImage(%q).String() = %q; want %q", tt.in, s, tt.str)
			}
		})
	}
}

func TestParseImageErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrImageNameEmpty},
		{"uppercase repository", "Nginx:1", ErrImageUppercase},
		{"empty tag", "nginx:", ErrImageInvalidFormat},
		{"space", "ngi nx", ErrImageInvalidFormat},
		{"short digest fails the grammar", "nginx@sha256:abc", ErrImageInvalidFormat},
		{"digest of wrong length", "nginx@sha256:" + hex64[:32], ErrDigestInvalidLength},
		{"uppercase hex digest", "nginx@sha256:" + strings.ToUpper(hex64), ErrDigestInvalidFormat},
		{"unknown algorithm", "nginx@md5:" + hex64[:32], ErrDigestUnsupportedAlgo},
		{"path over 255 bytes", "reg.io/" + strings.Repeat("a", 256), ErrImageNameTooLong},
		{"leading separator", "-nginx", ErrImageInvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseImage(tt.in); !errors.Is(err, tt.want) {
				t.Errorf("ParseImage(%q) error = %v; want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestSplitRegistry(t *testing.T) {
	tests := []struct{ in, registry, repository string }{
		{"nginx", "", "nginx"},
		{"myorg/app", "", "myorg/app"},
		{"my.reg/x/y", "my.reg", "x/y"},
		{"host:5000/x", "host:5000", "x"},
		{"localhost/x/y", "localhost", "x/y"},
		{"localhostx/y", "", "localhostx/y"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			reg, repo := SplitRegistry(tt.in)
			if reg != tt.registry || repo != tt.repository {
				t.Errorf("SplitRegistry(%q) = %q, %q; want %q, %q", tt.in, reg, repo, tt.registry, tt.repository)
			}
		})
	}
}

// TestOverrideImage covers every component × operator, with Karmada's
// quirks: registry add concatenates, tag works on "tag or digest", an
// invalid tag value is ignored, any override drops a digest next to a tag.
func TestOverrideImage(t *testing.T) {
	const (
		reg  = policyv1alpha1.Registry
		repo = policyv1alpha1.Repository
		tag  = policyv1alpha1.Tag
		add  = policyv1alpha1.OverriderOpAdd
		rep  = policyv1alpha1.OverriderOpReplace
		rm   = policyv1alpha1.OverriderOpRemove
	)
	tests := []struct {
		name, image string
		component   policyv1alpha1.ImageComponent
		operator    policyv1alpha1.OverriderOperator
		value, want string
	}{
		{"registry add concatenates", "docker.io/library/nginx:1", reg, add, ".cn", "docker.io.cn/library/nginx:1"},
		{"registry add without registry", "busybox", reg, add, ".cn", ".cn/busybox"},
		{"registry replace inserts", "nginx:1.19", reg, rep, "mirror.local:8443", "mirror.local:8443/nginx:1.19"},
		{"registry replace keeps digest", "r.io:5000/team/app@" + dgst, reg, rep, "m.io", "m.io/team/app@" + dgst},
		{"registry replace drops digest next to tag", "quay.io/org/app:v2@" + dgst, reg, rep, "reg.local:5000", "reg.local:5000/org/app:v2"},
		{"registry remove", "localhost:5000/foo:v1", reg, rm, "", "foo:v1"},
		{"registry remove without registry", "myorg/app:3", reg, rm, "", "myorg/app:3"},
		{"repository add", "reg.io/app:1", repo, add, "-mirror", "reg.io/app-mirror:1"},
		{"repository replace", "reg.io/team/app:1", repo, rep, "other/img", "reg.io/other/img:1"},
		{"repository remove leaves the tag", "nginx:1", repo, rm, "", ":1"},
		{"tag add appends", "nginx:1.19", tag, add, "-alpine", "nginx:1.19-alpine"},
		{"tag add without tag", "nginx", tag, add, "v1", "nginx:v1"},
		{"tag add to digest is not a digest any more: unchanged", "redis@" + dgst, tag, add, "x", "redis@" + dgst},
		{"tag replace", "nginx:1", tag, rep, "2", "nginx:2"},
		{"tag replace by digest", "redis:6", tag, rep, dgst, "redis@" + dgst},
		{"tag replace digest by tag", "redis@" + dgst, tag, rep, "7", "redis:7"},
		{"tag replace invalid ignored", "alpine:3", tag, rep, "bad tag!", "alpine:3"},
		{"tag remove", "nginx:1", tag, rm, "", "nginx"},
		{"tag remove digest", "nginx@" + dgst, tag, rm, "", "nginx"},
		{"tag remove nothing", "busybox", tag, rm, "", "busybox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &policyv1alpha1.ImageOverrider{Component: tt.component, Operator: tt.operator, Value: tt.value}
			op, err := imageOp("/x", tt.image, o)
			if err != nil {
				t.Fatalf("imageOp(%q, %s %s %q) error = %v", tt.image, tt.component, tt.operator, tt.value, err)
			}
			if op.Value != tt.want {
				t.Errorf("imageOp(%q, %s %s %q) = %q; want %q", tt.image, tt.component, tt.operator, tt.value, op.Value, tt.want)
			}
		})
	}
}

func TestOverrideImageErrors(t *testing.T) {
	o := &policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "x"}
	_, err := imageOp("/x", "Nginx:1", o)
	if want := "failed to parse image value(Nginx:1), error: repository name must be lowercase"; err == nil || err.Error() != want {
		t.Errorf("imageOp(Nginx:1) error = %v; want %q", err, want)
	}
	if _, err := imageOp("x", "nginx", o); err == nil {
		t.Errorf("imageOp with relative path error = nil; want an error")
	}
	o.Component = "Port"
	if _, err := imageOp("/x", "nginx", o); err == nil || !strings.Contains(err.Error(), "unsupported image component(Port)") {
		t.Errorf("imageOp(component Port) error = %v; want unsupported image component", err)
	}
}
