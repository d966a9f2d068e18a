package membership

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// Token formats, as kubeadm's bootstrap tokens.
const (
	idLen     = 6
	secretLen = 16
	alphabet  = "abcdefghijklmnopqrstuvwxyz0123456789"
)

var tokenRE = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// Token is a stored bootstrap token: everything but its secret.
type Token struct {
	ID string `json:"id"`
	// SecretHash is the hex SHA-256 of the secret; the secret itself is
	// shown once, by CreateToken, and never stored.
	SecretHash string `json:"secretHash"`
	// Cluster is the only name the token registers; empty for any.
	Cluster string `json:"cluster,omitempty"`
	// Uses is how many registrations the token allows; 0 for any number.
	Uses int `json:"uses,omitempty"`
	// Used is how many it made.
	Used        int       `json:"used,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	Description string    `json:"description,omitempty"`
}

// UsesLeft is how many registrations the token still allows; 0 for
// unlimited, as in the API (a used-up token is not listed).
func (t Token) UsesLeft() int {
	if t.Uses == 0 {
		return 0
	}
	return max(t.Uses-t.Used, 0)
}

// Usable reports whether the token can still register something at now.
func (t Token) Usable(now time.Time) bool {
	return now.Before(t.Expires) && (t.Uses == 0 || t.Used < t.Uses)
}

// Parse splits a token into id and secret.
func Parse(token string) (id, secret string, err error) {
	m := tokenRE.FindStringSubmatch(token)
	if m == nil {
		return "", "", fmt.Errorf("%w: want <6 characters [a-z0-9]>.<16 characters [a-z0-9]>", ErrMalformed)
	}
	return m[1], m[2], nil
}

// ParseID returns the id of a token or of a bare id.
func ParseID(s string) (string, error) {
	if id, _, err := Parse(s); err == nil {
		return id, nil
	}
	if len(s) == idLen && strings.Trim(s, alphabet) == "" {
		return s, nil
	}
	return "", fmt.Errorf("%w: %q is neither a token id (6 characters [a-z0-9]) nor a token", ErrMalformed, s)
}

// check decides whether secret redeems t for cluster at now. A wrong
// secret reads like an unknown id: the id alone tells an attacker nothing.
func (t Token) check(secret, cluster string, now time.Time) error {
	if subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(t.SecretHash)) != 1 {
		return fmt.Errorf("%w: unknown token id %q or wrong secret", ErrRefused, t.ID)
	}
	switch {
	case !now.Before(t.Expires):
		return fmt.Errorf("%w: token %q expired at %s", ErrRefused, t.ID, t.Expires.UTC().Format(time.RFC3339))
	case t.Uses > 0 && t.Used >= t.Uses:
		return fmt.Errorf("%w: token %q is used up (%d of %d registrations made)", ErrRefused, t.ID, t.Used, t.Uses)
	case t.Cluster != "" && t.Cluster != cluster:
		return fmt.Errorf("%w: token %q registers only cluster %q, not %q", ErrRefused, t.ID, t.Cluster, cluster)
	}
	return nil
}

// generate returns a new random id and secret.
func generate() (id, secret string, err error) {
	s, err := randomString(idLen + secretLen)
	if err != nil {
		return "", "", err
	}
	return s[:idLen], s[idLen:], nil
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("membership: crypto/rand: %w", err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Fingerprint is a public key's fingerprint: "sha256:" and the hex SHA-256
// of its DER SubjectPublicKeyInfo (the form of certs.Hash).
func Fingerprint(spki []byte) string {
	sum := sha256.Sum256(spki)
	return "sha256:" + hex.EncodeToString(sum[:])
}
