package pki

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// EncryptionKeySize is the size of the key that seals the CA for the
// store: 32 bytes, AES-256.
const EncryptionKeySize = 32

// sealed is the CA as stored in etcd: the certificate in the clear (it is
// public) and the key encrypted with AES-256-GCM, the certificate as
// additional data so that a key is never opened with another certificate.
type sealed struct {
	CertPEM string `json:"certPEM"`
	Nonce   []byte `json:"nonce"`
	Key     []byte `json:"key"`
}

// ReadEncryptionKey reads a CA encryption key file: 32 random bytes,
// base64-encoded (head -c 32 /dev/urandom | base64), surrounding white
// space ignored.
func ReadEncryptionKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: CA encryption key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != EncryptionKeySize {
		return nil, fmt.Errorf("pki: CA encryption key %s: want %d random bytes, base64-encoded (head -c %d /dev/urandom | base64)",
			path, EncryptionKeySize, EncryptionKeySize)
	}
	return key, nil
}

// NewCA creates a CA in memory.
func NewCA() (*CA, error) {
	ca, _, err := newCA()
	return ca, err
}

// Seal encrypts the CA with key (EncryptionKeySize bytes) for the store.
func (ca *CA) Seal(key []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(ca)
	if err != nil {
		return nil, err
	}
	s := sealed{CertPEM: string(ca.CertPEM), Nonce: make([]byte, aead.NonceSize())}
	if _, err := rand.Read(s.Nonce); err != nil {
		return nil, fmt.Errorf("pki: seal CA: %w", err)
	}
	s.Key = aead.Seal(nil, s.Nonce, keyPEM, ca.CertPEM)
	return json.Marshal(s)
}

// OpenSealed decrypts a CA that Seal encrypted with the same key.
func OpenSealed(data, key []byte) (*CA, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	var s sealed
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("pki: decode sealed CA: %w", err)
	}
	if len(s.Nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("pki: sealed CA: nonce of %d bytes, want %d", len(s.Nonce), aead.NonceSize())
	}
	keyPEM, err := aead.Open(nil, s.Nonce, s.Key, []byte(s.CertPEM))
	if err != nil {
		return nil, fmt.Errorf("pki: decrypt sealed CA (another encryption key than the one it was sealed with?): %w", err)
	}
	return ParseCA([]byte(s.CertPEM), keyPEM)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != EncryptionKeySize {
		return nil, fmt.Errorf("pki: CA encryption key of %d bytes, want %d", len(key), EncryptionKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA encryption key: %w", err)
	}
	return cipher.NewGCM(block)
}
