package azblob

// The client assertion of a service principal's certificate: a JWT signed
// with the certificate's RSA key, as the Microsoft identity platform
// takes it in the client-credentials grant (client_assertion_type
// urn:ietf:params:oauth:client-assertion-type:jwt-bearer).
//
// Its header is {"alg":"PS256","typ":"JWT","x5t#S256":THUMBPRINT}, the
// thumbprint the standard base64 of the SHA-256 of the certificate's DER
// (and "x5c", the chain's certificates in standard base64, leaf first,
// when AZURE_CLIENT_SEND_CERTIFICATE_CHAIN asks for it); its claims are
// aud (the token endpoint), iss and sub (the client id), jti (a random
// id), nbf (now) and exp (ten minutes on), in seconds; the signature is
// RSASSA-PSS with SHA-256 and a salt as long as the hash. Header, claims
// and signature are base64url without padding, joined by dots.

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// certAssertion reads the PEM file at path (the certificate, then any
// chain, and the unencrypted RSA private key, PKCS #8 or PKCS #1) and
// returns the signed assertion for clientID at endpoint.
func certAssertion(path, clientID, endpoint string, sendChain bool, now time.Time) (string, error) {
	b, err := readFileBounded(path, maxTokenFile)
	if err != nil {
		return "", fmt.Errorf("reading the client certificate: %w", err)
	}
	var (
		certs []*x509.Certificate
		key   *rsa.PrivateKey
	)
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		switch block.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return "", errors.New("the client certificate file holds a certificate that does not parse")
			}
			certs = append(certs, c)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if rk, ok := k.(*rsa.PrivateKey); err == nil && ok {
				key = rk
			} else {
				return "", errors.New("the client certificate's key is not an RSA key in PKCS #8")
			}
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return "", errors.New("the client certificate's RSA key does not parse (an encrypted key is not supported)")
			}
			key = k
		case "ENCRYPTED PRIVATE KEY":
			return "", errors.New("the client certificate's key is encrypted; a password-protected key is not supported")
		}
	}
	if len(certs) == 0 || key == nil {
		return "", errors.New("the client certificate file needs a PEM certificate and its unencrypted RSA key (PKCS #12 is not supported)")
	}
	// The certificate of the key is the leaf, whatever the file's order.
	leaf := -1
	for i, c := range certs {
		if pub, ok := c.PublicKey.(*rsa.PublicKey); ok && pub.Equal(&key.PublicKey) {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return "", errors.New("no certificate in the client certificate file is the key's")
	}
	thumb := sha256.Sum256(certs[leaf].Raw)
	header := map[string]any{"alg": "PS256", "typ": "JWT", "x5t#S256": base64.StdEncoding.EncodeToString(thumb[:])}
	if sendChain {
		x5c := []string{base64.StdEncoding.EncodeToString(certs[leaf].Raw)}
		for i, c := range certs {
			if i != leaf {
				x5c = append(x5c, base64.StdEncoding.EncodeToString(c.Raw))
			}
		}
		header["x5c"] = x5c
	}
	claims := map[string]any{
		"aud": endpoint, "iss": clientID, "sub": clientID, "jti": uuid.NewString(),
		"nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
	}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPSS(rand.Reader, key, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		return "", errors.New("signing the client assertion failed")
	}
	return signed + "." + enc.EncodeToString(sig), nil
}
