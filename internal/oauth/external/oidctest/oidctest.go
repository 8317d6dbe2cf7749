// Package oidctest runs a small OpenID Connect issuer for tests: discovery
// (/.well-known/openid-configuration), a JWKS endpoint and token signing with generated RSA and
// ECDSA keys, served over TLS by httptest on 127.0.0.1. Its JWKS endpoint can be switched into
// failure modes (down, slow, oversized, redirecting) to exercise a resource server's key
// handling. It is test-only: it has no authorization or token endpoint logic.
package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// JWKSMode selects how the JWKS endpoint answers.
type JWKSMode int32

const (
	JWKSOK       JWKSMode = iota // the published keys
	JWKSDown                     // 503
	JWKSSlow                     // waits 10 s (or until the client gives up), then answers
	JWKSOversize                 // a valid-looking 2 MiB key set
	JWKSRedirect                 // 302 to /canary-jwks on this server, which serves the keys
	JWKSEmpty                    // {"keys":[]}
	JWKSGarbage                  // not JSON
)

// Key is a signing key of the issuer.
type Key struct {
	ID        string
	Alg       jose.SignatureAlgorithm
	Private   crypto.Signer
	Published bool
}

// Issuer is a running test issuer.
type Issuer struct {
	// URL is the issuer identifier, https://127.0.0.1:port.
	URL string
	srv *httptest.Server

	mu   sync.Mutex
	keys []*Key
	// DiscoveryIssuer, when set, is what discovery claims as "issuer" (mismatch tests).
	discoveryIssuer string

	mode         atomic.Int32
	jwksHits     atomic.Int64
	canaryHits   atomic.Int64
	defaultKey   *Key
	defaultECKey *Key
}

// New starts an issuer with one published RS256 key and one published ES256 key.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	return start(tb, true)
}

// NewPlain is New served over plain http (a provider on loopback, like Dex's dev issuer).
func NewPlain(tb testing.TB) *Issuer {
	tb.Helper()
	return start(tb, false)
}

func start(tb testing.TB, useTLS bool) *Issuer {
	tb.Helper()
	i := &Issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", i.discovery)
	mux.HandleFunc("GET /jwks", i.jwks)
	mux.HandleFunc("GET /canary-jwks", func(w http.ResponseWriter, r *http.Request) {
		i.canaryHits.Add(1)
		i.writeKeys(w)
	})
	if useTLS {
		i.srv = httptest.NewTLSServer(mux)
	} else {
		i.srv = httptest.NewServer(mux)
	}
	tb.Cleanup(i.srv.Close)
	i.URL = i.srv.URL
	i.defaultKey = i.AddKey(tb, jose.RS256, true)
	i.defaultECKey = i.AddKey(tb, jose.ES256, true)
	return i
}

// CertPool trusts the issuer's TLS certificate.
func (i *Issuer) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(i.srv.Certificate())
	return p
}

// Certificate is the issuer's self-signed TLS certificate (to write a CA file).
func (i *Issuer) Certificate() *x509.Certificate { return i.srv.Certificate() }

// SetJWKSMode switches the JWKS endpoint's behaviour.
func (i *Issuer) SetJWKSMode(m JWKSMode) { i.mode.Store(int32(m)) }

// SetDiscoveryIssuer makes discovery claim another issuer identifier.
func (i *Issuer) SetDiscoveryIssuer(s string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.discoveryIssuer = s
}

// JWKSHits counts requests to /jwks; CanaryHits counts requests to the redirect target.
func (i *Issuer) JWKSHits() int64   { return i.jwksHits.Load() }
func (i *Issuer) CanaryHits() int64 { return i.canaryHits.Load() }

// DefaultKey is the published RS256 key; DefaultECKey the published ES256 key.
func (i *Issuer) DefaultKey() *Key   { return i.defaultKey }
func (i *Issuer) DefaultECKey() *Key { return i.defaultECKey }

// AddKey generates a key for alg (RS*, PS*, ES256/384/512 or EdDSA); published keys appear
// in the JWKS.
func (i *Issuer) AddKey(tb testing.TB, alg jose.SignatureAlgorithm, published bool) *Key {
	tb.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.ES384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case jose.ES512:
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		tb.Fatalf("oidctest: unsupported alg %s", alg)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var id [6]byte
	rand.Read(id[:])
	k := &Key{ID: hex.EncodeToString(id[:]), Alg: alg, Private: priv, Published: published}
	i.mu.Lock()
	i.keys = append(i.keys, k)
	i.mu.Unlock()
	return k
}

// Publish adds or removes k from the JWKS.
func (i *Issuer) Publish(k *Key, published bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	k.Published = published
}

// Claims returns a valid access-token claim set for sub and aud, issued now for 5 minutes.
func (i *Issuer) Claims(sub, aud string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": i.URL, "sub": sub, "aud": aud,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": fmt.Sprint(now.UnixNano()), "client_id": "test-client",
	}
}

// SignOpts adjust a signature.
type SignOpts struct {
	Key     *Key           // default: the RS256 default key
	Typ     string         // JOSE typ; default "at+jwt"; "-" omits it
	KeyID   *string        // overrides the kid header ("" omits it)
	Headers map[string]any // extra protected headers (jku, x5u, jwk, crit, …)
}

// Sign returns a compact JWS of claims.
func (i *Issuer) Sign(tb testing.TB, claims map[string]any, o SignOpts) string {
	tb.Helper()
	k := o.Key
	if k == nil {
		k = i.defaultKey
	}
	kid := k.ID
	if o.KeyID != nil {
		kid = *o.KeyID
	}
	so := &jose.SignerOptions{}
	switch o.Typ {
	case "":
		so = so.WithType("at+jwt")
	case "-":
	default:
		so = so.WithType(jose.ContentType(o.Typ))
	}
	for h, v := range o.Headers {
		so = so.WithHeader(jose.HeaderKey(h), v)
	}
	sk := jose.SigningKey{Algorithm: k.Alg, Key: k.Private}
	if kid != "" {
		sk.Key = jose.JSONWebKey{Key: k.Private, KeyID: kid, Algorithm: string(k.Alg)}
	}
	signer, err := jose.NewSigner(sk, so)
	if err != nil {
		tb.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		tb.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// PublicJWK returns k's public JWK.
func (k *Key) PublicJWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: string(k.Alg), Use: "sig"}
}

func (i *Issuer) discovery(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	iss := i.discoveryIssuer
	i.mu.Unlock()
	if iss == "" {
		iss = i.URL
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                i.URL + "/authorize",
		"token_endpoint":                        i.URL + "/token",
		"jwks_uri":                              i.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (i *Issuer) jwks(w http.ResponseWriter, r *http.Request) {
	i.jwksHits.Add(1)
	switch JWKSMode(i.mode.Load()) {
	case JWKSDown:
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	case JWKSSlow:
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
		}
		i.writeKeys(w)
	case JWKSOversize:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"keys":[{"kty":"oct","k":"`)
		fmt.Fprint(w, strings.Repeat("A", 2<<20))
		fmt.Fprint(w, `"}]}`)
	case JWKSRedirect:
		http.Redirect(w, r, i.URL+"/canary-jwks", http.StatusFound)
	case JWKSEmpty:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"keys":[]}`)
	case JWKSGarbage:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `<html>`)
	default:
		i.writeKeys(w)
	}
}

func (i *Issuer) writeKeys(w http.ResponseWriter) {
	i.mu.Lock()
	var set jose.JSONWebKeySet
	for _, k := range i.keys {
		if k.Published {
			set.Keys = append(set.Keys, k.PublicJWK())
		}
	}
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/jwk-set+json")
	json.NewEncoder(w).Encode(set)
}
