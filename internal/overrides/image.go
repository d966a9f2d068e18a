package overrides

import (
	"errors"
	"regexp"
	"strings"
)

// The grammar below is distribution/reference's (v0.6), which Karmada's
// imageparser uses; it is rebuilt here so that Tether parses exactly the
// images Karmada parses, and fails on exactly the ones it fails on.
const (
	refAlphanumeric   = `[a-z0-9]+`
	refSeparator      = `(?:[._]|__|[-]+)`
	refDomainNameComp = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refIPv6           = `\[(?:[a-fA-F0-9:]+)\]`
	refOptionalPort   = `(?::[0-9]+)?`
	refTag            = `[\w][\w.-]{0,127}`
	refDigest         = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`

	refDomainName    = refDomainNameComp + `(?:\.` + refDomainNameComp + `)*`
	refDomainAndPort = `(?:` + refDomainName + `|` + refIPv6 + `)` + refOptionalPort
	refPathComponent = refAlphanumeric + `(?:` + refSeparator + refAlphanumeric + `)*`
	refRemoteName    = refPathComponent + `(?:/` + refPathComponent + `)*`
	refName          = `(?:` + refDomainAndPort + `/)?` + refRemoteName

	// repositoryNameMaxLen is distribution's limit on the path part of a
	// name (without the domain), in bytes.
	repositoryNameMaxLen = 255
)

var (
	referenceRegexp = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	nameRegexp      = regexp.MustCompile(`^(?:(` + refDomainAndPort + `)/)?(` + refRemoteName + `)$`)

	// anchoredTagRegexp and anchoredDigestRegexp decide what a Tag override
	// value becomes (Karmada's SetTagOrDigest).
	anchoredTagRegexp    = regexp.MustCompile(`^` + refTag + `$`)
	anchoredDigestRegexp = regexp.MustCompile(`^` + refDigest + `$`)

	// digestHexLen lists go-digest's algorithms that Karmada links in
	// (crypto/sha256 and crypto/sha512) with the length of their hex encoding.
	digestHexLen   = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
	lowerHexRegexp = regexp.MustCompile(`^[a-f0-9]+$`)
	goDigestRegexp = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)
)

// Errors of the image parser, worded as distribution/reference and go-digest
// word them, since Karmada surfaces those texts in its events.
var (
	ErrImageInvalidFormat    = errors.New("invalid reference format")
	ErrImageUppercase        = errors.New("repository name must be lowercase")
	ErrImageNameEmpty        = errors.New("repository name must have at least one component")
	ErrImageNameTooLong      = errors.New("repository name must not be more than 255 characters")
	ErrDigestInvalidFormat   = errors.New("invalid checksum digest format")
	ErrDigestInvalidLength   = errors.New("invalid checksum digest length")
	ErrDigestUnsupportedAlgo = errors.New("unsupported digest algorithm")
)

// Image is an image reference split as Karmada's imageparser splits it:
// [registry/]repository[:tag|@digest]. A reference is never normalised
// ("nginx" stays "nginx"), and when it carries both a tag and a digest only
// the tag is kept, so re-serialising drops the digest.
type Image struct {
	Registry   string // host[:port], empty when the first segment is not a host
	Repository string // path without the registry, e.g. "library/nginx"
	Tag        string // empty when absent
	Digest     string // "algo:hex"; empty when absent or when Tag is set
}

// ParseImage parses s like Karmada's imageparser.Parse.
func ParseImage(s string) (Image, error) {
	m := referenceRegexp.FindStringSubmatch(s)
	if m == nil {
		switch {
		case s == "":
			return Image{}, ErrImageNameEmpty
		case referenceRegexp.MatchString(strings.ToLower(s)):
			return Image{}, ErrImageUppercase
		}
		return Image{}, ErrImageInvalidFormat
	}
	name, tag, digest := m[1], m[2], m[3]
	if n := nameRegexp.FindStringSubmatch(name); n != nil && len(n[2]) > repositoryNameMaxLen {
		return Image{}, ErrImageNameTooLong
	}
	if digest != "" {
		if err := validateDigest(digest); err != nil {
			return Image{}, err
		}
	}
	img := Image{Tag: tag}
	img.Registry, img.Repository = SplitRegistry(name)
	if tag == "" {
		img.Digest = digest
	}
	return img, nil
}

// validateDigest is go-digest's Digest.Validate for the algorithms Karmada
// links in.
func validateDigest(d string) error {
	i := strings.Index(d, ":")
	if i <= 0 || i+1 == len(d) {
		return ErrDigestInvalidFormat
	}
	algo, encoded := d[:i], d[i+1:]
	n, ok := digestHexLen[algo]
	switch {
	case !ok && !goDigestRegexp.MatchString(d):
		return ErrDigestInvalidFormat
	case !ok:
		return ErrDigestUnsupportedAlgo
	case len(encoded) != n:
		return ErrDigestInvalidLength
	case !lowerHexRegexp.MatchString(encoded):
		return ErrDigestInvalidFormat
	}
	return nil
}

// SplitRegistry splits a repository name into registry and path the way
// Karmada's SplitHostname does: the first segment is a registry only if it
// contains '.' or ':' or is "localhost"; otherwise the registry is empty and
// the whole name is the repository ("myorg/app" keeps "myorg").
func SplitRegistry(name string) (registry, repository string) {
	i := strings.IndexByte(name, '/')
	if i == -1 || (!strings.ContainsAny(name[:i], ".:") && name[:i] != "localhost") {
		return "", name
	}
	return name[:i], name[i+1:]
}

// String re-serialises the reference: [registry/]repository, then ":tag"
// if there is a tag, else "@digest" if there is a digest.
func (img Image) String() string {
	s := img.Repository
	if img.Registry != "" {
		s = img.Registry + "/" + img.Repository
	}
	switch {
	case img.Tag != "":
		return s + ":" + img.Tag
	case img.Digest != "":
		return s + "@" + img.Digest
	}
	return s
}

// TagOrDigest returns the tag, or the digest when there is no tag.
func (img Image) TagOrDigest() string {
	if img.Tag != "" {
		return img.Tag
	}
	return img.Digest
}

// SetTagOrDigest sets v as the tag if it is a valid tag, else as the digest
// if it is a valid digest (clearing the other); any other value leaves the
// image unchanged, silently, as in Karmada.
func (img *Image) SetTagOrDigest(v string) {
	switch {
	case anchoredTagRegexp.MatchString(v):
		img.Tag, img.Digest = v, ""
	case anchoredDigestRegexp.MatchString(v):
		img.Tag, img.Digest = "", v
	}
}

// RemoveTagOrDigest drops the tag, or the digest when there is no tag.
func (img *Image) RemoveTagOrDigest() {
	if img.Tag != "" {
		img.Tag = ""
		return
	}
	img.Digest = ""
}
