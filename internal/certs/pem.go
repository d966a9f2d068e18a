// Package certs holds the certificate primitives both hub and agent use:
// PEM parsing with size bounds, key encoding, certificate requests, and the
// CA pin ("sha256:<hex>" of the CA's SubjectPublicKeyInfo, as kubeadm pins).
// It imports only the standard library.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
)

// maxPEMBytes bounds what the parsers accept: a certificate chain or request
// is a few KiB, so anything larger is hostile or a mistake.
const maxPEMBytes = 64 << 10

// ParseCertificate parses the first PEM CERTIFICATE block.
func ParseCertificate(data []byte) (*x509.Certificate, error) {
	block, err := decodePEM(data, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(block.Bytes)
}

// ParseCSR parses a PEM CERTIFICATE REQUEST and checks its signature.
func ParseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, err := decodePEM(data, "CERTIFICATE REQUEST")
	if err != nil {
		return nil, err
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certs: certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("certs: certificate request signature: %w", err)
	}
	return csr, nil
}

// ParsePrivateKey parses a PEM PKCS#8 ("PRIVATE KEY") or SEC 1 ("EC PRIVATE
// KEY") key.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	if len(data) > maxPEMBytes {
		return nil, fmt.Errorf("certs: private key of %d bytes is over the %d-byte limit", len(data), maxPEMBytes)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("certs: no PEM private key found")
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("certs: private key of type %T cannot sign", k)
		}
		return signer, nil
	}
	return nil, fmt.Errorf("certs: PEM block %q is not a private key", block.Type)
}

// EncodePrivateKey encodes key as PEM PKCS#8.
func EncodePrivateKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("certs: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// NewCSR makes a new key and a PEM certificate request for name, as an
// agent does before it registers.
func NewCSR(name string) (csrPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: certificate request for %q: %w", name, err)
	}
	keyPEM, err = EncodePrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), keyPEM, err
}

func decodePEM(data []byte, typ string) (*pem.Block, error) {
	if len(data) > maxPEMBytes {
		return nil, fmt.Errorf("certs: %s of %d bytes is over the %d-byte limit", typ, len(data), maxPEMBytes)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("certs: no PEM %s found", typ)
	}
	if block.Type != typ {
		return nil, fmt.Errorf("certs: PEM block is %q; want %q", block.Type, typ)
	}
	return block, nil
}

// Hash is the pin of a CA certificate in kubeadm's form: "sha256:" and the
// hex SHA-256 of its SubjectPublicKeyInfo. Agents compare it before they send
// anything to a hub.
func Hash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// EncodeCertificate encodes DER as a PEM CERTIFICATE block.
func EncodeCertificate(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
