package external

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// getter fetches small JSON documents from the provider: https only, no redirects, a timeout
// and a size cap. Errors name the failure and never echo the response body.
type getter struct {
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	// loopbackHTTP admits http URLs on a loopback address too: set for an issuer that is
	// itself one (a provider on the same host), never for an https issuer.
	loopbackHTTP bool
}

// allowed reports whether url may be fetched: https, or http on loopback when admitted.
func (g *getter) allowed(url string) bool {
	return strings.HasPrefix(url, "https://") || g.loopbackHTTP && isLoopbackHTTP(url)
}

func newGetter(roots *x509.CertPool, timeout time.Duration, maxBytes int64) *getter {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	tr.ResponseHeaderTimeout = timeout
	tr.MaxResponseHeaderBytes = 16 << 10
	return &getter{
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout:  timeout,
		maxBytes: maxBytes,
	}
}

// get returns the body of a 200 JSON response from url.
func (g *getter) get(ctx context.Context, url string) ([]byte, error) {
	if !g.allowed(url) {
		return nil, errors.New("not an https URL")
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errors.New("malformed URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fmt.Errorf("redirect (status %d) not followed", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("status %d", resp.StatusCode)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return nil, transient{err}
		}
		return nil, err
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil ||
		!(mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil, errors.New("content type is not JSON")
	}
	if resp.ContentLength > g.maxBytes {
		return nil, fmt.Errorf("response larger than %d bytes", g.maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, g.maxBytes+1))
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // a body cut short by the deadline can read as a clean EOF
	}
	if err != nil {
		return nil, transportError(err)
	}
	if int64(len(body)) > g.maxBytes {
		return nil, fmt.Errorf("response larger than %d bytes", g.maxBytes)
	}
	return body, nil
}

// transient marks a failure that may pass by itself (the provider down, slow or overloaded),
// as opposed to a misconfiguration (a certificate we do not trust, a 404, another issuer).
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

// isTransient reports whether err is, or wraps, a transient failure.
func isTransient(err error) bool {
	var t transient
	return errors.As(err, &t)
}

func transportError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return transient{errors.New("timed out")}
	}
	if errors.Is(err, context.Canceled) {
		return transient{errors.New("canceled")}
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return errors.New("TLS certificate not accepted")
	}
	return transient{errors.New("connection failed")}
}

// discovery is the part of the OpenID Provider metadata we use.
type discovery struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
}

// discover fetches issuer's metadata and checks that it names exactly issuer (OpenID Connect
// Discovery §4.3) and an https jwks_uri.
func (g *getter) discover(ctx context.Context, issuer string) (discovery, error) {
	body, err := g.get(ctx, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return discovery{}, fmt.Errorf("external: discovery of %s: %w", issuer, err)
	}
	var d discovery
	if err := json.Unmarshal(body, &d); err != nil {
		return discovery{}, errors.New("external: discovery: malformed metadata")
	}
	if d.Issuer != issuer {
		return discovery{}, errors.New("external: discovery: metadata names a different issuer")
	}
	if !g.allowed(d.JWKSURI) {
		return discovery{}, errors.New("external: discovery: jwks_uri missing or not https")
	}
	return d, nil
}
