package cimd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neemias/neemias-mcp/internal/netguard"
)

// Error kinds. Every error from Fetch wraps exactly one of them; the authorization server
// answers all of them with invalid_client and logs the message, which names the reason but
// never echoes the fetched body.
var (
	// ErrNotMetadataURL: the client_id is not an acceptable metadata URL. Nothing was fetched.
	ErrNotMetadataURL = errors.New("cimd: client_id is not a valid client metadata URL")
	// ErrForbiddenAddress: the host is, resolves to, or was about to connect to an address
	// that is not public unicast. No connection was made.
	// It is netguard's, the one SSRF policy of every outbound client.
	ErrForbiddenAddress = netguard.ErrForbiddenAddress
	// ErrFetch: the document could not be retrieved (DNS, connect, TLS, timeout, status,
	// redirect, content type, size).
	ErrFetch = errors.New("cimd: fetching the client metadata document failed")
	// ErrInvalidDocument: the document was retrieved but is not an acceptable registration.
	ErrInvalidDocument = errors.New("cimd: invalid client metadata document")
)

// Token endpoint authentication methods a metadata document may declare.
const (
	AuthMethodNone          = "none"
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// Metadata is a validated client registration. Optional members are empty when absent;
// GrantTypes, ResponseTypes and TokenEndpointAuthMethod carry their defaults
// (["authorization_code"], ["code"], "none").
type Metadata struct {
	ClientID                string          `json:"client_id"`
	ClientName              string          `json:"client_name,omitempty"`
	RedirectURIs            []string        `json:"redirect_uris"`
	GrantTypes              []string        `json:"grant_types"`
	ResponseTypes           []string        `json:"response_types"`
	TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method"`
	ClientURI               string          `json:"client_uri,omitempty"`
	LogoURI                 string          `json:"logo_uri,omitempty"`
	TOSURI                  string          `json:"tos_uri,omitempty"`
	PolicyURI               string          `json:"policy_uri,omitempty"`
	JWKSURI                 string          `json:"jwks_uri,omitempty"`
	JWKS                    json.RawMessage `json:"jwks,omitempty"`
	Scope                   string          `json:"scope,omitempty"`
	SoftwareID              string          `json:"software_id,omitempty"`
	SoftwareVersion         string          `json:"software_version,omitempty"`
}

func (m *Metadata) clone() *Metadata {
	c := *m
	c.RedirectURIs = slices.Clone(m.RedirectURIs)
	c.GrantTypes = slices.Clone(m.GrantTypes)
	c.ResponseTypes = slices.Clone(m.ResponseTypes)
	c.JWKS = slices.Clone(m.JWKS)
	return &c
}

// Defaults and bounds for Options.
const (
	DefaultConnectTimeout = 3 * time.Second
	DefaultTimeout        = 5 * time.Second
	DefaultMaxBytes       = 5 << 10 // the draft's recommended maximum
	MaxMaxBytes           = 64 << 10
	DefaultMinTTL         = time.Minute
	DefaultMaxTTL         = 24 * time.Hour
	DefaultTTL            = 5 * time.Minute
	DefaultNegativeTTL    = 10 * time.Second
	DefaultMaxEntries     = 1000
)

// Options configure a Fetcher. The zero value is the production configuration.
type Options struct {
	// Resolver resolves client hosts; nil means net.DefaultResolver.
	Resolver Resolver
	// ConnectTimeout bounds each TCP connect and the TLS handshake; Timeout bounds the whole
	// fetch, body included (a document trickled byte by byte fails at Timeout).
	ConnectTimeout, Timeout time.Duration
	// MaxBytes caps the document size (default 5 KiB, at most 64 KiB).
	MaxBytes int64
	// MinTTL and MaxTTL bound how long a document is reused; DefaultTTL applies when the
	// response has no cache headers. no-store and no-cache are honoured: nothing is kept.
	MinTTL, MaxTTL, DefaultTTL time.Duration
	// NegativeTTL is how long a failure is remembered (default 10 s; negative disables).
	// Refusals of the client_id itself are not cached: they cost nothing to repeat.
	NegativeTTL time.Duration
	// MaxEntries bounds the cache (default 1000).
	MaxEntries int
	// Now is the clock (tests).
	Now func() time.Time

	// AllowLoopbackForTests lets the fetcher connect to 127.0.0.0/8 and ::1, so tests can
	// serve documents from httptest.NewTLSServer. Every other refused range stays refused.
	// TESTS ONLY: production code never sets it.
	AllowLoopbackForTests bool
	// RootCAs replaces the system trust roots, for httptest's self-signed certificate.
	// TESTS ONLY: New refuses it unless AllowLoopbackForTests is also set.
	RootCAs *x509.CertPool
}

// Fetcher retrieves, validates and caches client metadata documents. It is safe for
// concurrent use.
type Fetcher struct {
	resolver                           Resolver
	policy                             netguard.Policy
	dialer                             *netguard.Dialer
	client                             *http.Client
	timeout                            time.Duration
	maxBytes                           int64
	minTTL, maxTTL, defaultTTL, negTTL time.Duration
	now                                func() time.Time
	cache                              *cache
	mu                                 sync.Mutex
	inflight                           map[string]*call
}

type call struct {
	done chan struct{}
	md   *Metadata
	err  error
}

// New returns a Fetcher.
func New(opts Options) (*Fetcher, error) {
	if opts.RootCAs != nil && !opts.AllowLoopbackForTests {
		return nil, errors.New("cimd: RootCAs is a test-only option and needs AllowLoopbackForTests")
	}
	if opts.MaxBytes > MaxMaxBytes {
		return nil, fmt.Errorf("cimd: MaxBytes above %d", MaxMaxBytes)
	}
	f := &Fetcher{
		resolver:   opts.Resolver,
		policy:     netguard.Policy{AllowLoopback: opts.AllowLoopbackForTests},
		timeout:    orDefault(opts.Timeout, DefaultTimeout),
		maxBytes:   opts.MaxBytes,
		minTTL:     orDefault(opts.MinTTL, DefaultMinTTL),
		maxTTL:     orDefault(opts.MaxTTL, DefaultMaxTTL),
		defaultTTL: orDefault(opts.DefaultTTL, DefaultTTL),
		negTTL:     orDefault(opts.NegativeTTL, DefaultNegativeTTL),
		now:        opts.Now,
		cache:      newCache(max(opts.MaxEntries, 0)),
		inflight:   make(map[string]*call),
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if f.cache.max == 0 {
		f.cache.max = DefaultMaxEntries
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.minTTL > f.maxTTL {
		return nil, errors.New("cimd: MinTTL above MaxTTL")
	}
	connect := orDefault(opts.ConnectTimeout, DefaultConnectTimeout)
	f.dialer = netguard.NewDialer(f.policy, f.resolver, connect)
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a proxy would resolve and connect for us, past every check
			DialContext:            f.dial,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs},
			TLSHandshakeTimeout:    connect,
			ResponseHeaderTimeout:  f.timeout,
			MaxResponseHeaderBytes: 16 << 10,
			DisableKeepAlives:      true, // every fetch gets a freshly checked connection
			DisableCompression:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Fetch returns the validated metadata document of clientID, from the cache when fresh.
// The result is the caller's to modify.
func (f *Fetcher) Fetch(ctx context.Context, clientID string) (*Metadata, error) {
	u, err := ParseClientID(clientID)
	if err != nil {
		return nil, err
	}
	if e, ok := f.cache.get(clientID, f.now()); ok {
		if e.err != nil {
			return nil, e.err
		}
		return e.md.clone(), nil
	}
	f.mu.Lock()
	c, ok := f.inflight[clientID]
	if !ok {
		c = &call{done: make(chan struct{})}
		f.inflight[clientID] = c
		// The fetch runs detached from any one caller's context (bounded by Timeout), so a
		// caller that gives up neither cancels it for the others nor gets its cancellation
		// cached as the client's failure.
		go f.run(context.WithoutCancel(ctx), clientID, u, c)
	}
	f.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, because(ReasonUnreachable, fmt.Errorf("%w: %w", ErrFetch, ctx.Err()))
	}
	if c.err != nil {
		return nil, c.err
	}
	return c.md.clone(), nil
}

func (f *Fetcher) run(ctx context.Context, clientID string, u *url.URL, c *call) {
	md, header, err := f.fetch(ctx, clientID, u)
	now := f.now()
	switch {
	case err != nil:
		if f.negTTL > 0 {
			f.cache.put(clientID, cacheEntry{err: err, expires: now.Add(f.negTTL)}, now)
		}
	default:
		ttl, ok := freshness(header, now)
		if !ok {
			ttl = f.defaultTTL
		}
		if ttl > 0 {
			ttl = min(max(ttl, f.minTTL), f.maxTTL)
			f.cache.put(clientID, cacheEntry{md: md, expires: now.Add(ttl)}, now)
		} else {
			f.cache.delete(clientID)
		}
	}
	c.md, c.err = md, err
	f.mu.Lock()
	delete(f.inflight, clientID)
	f.mu.Unlock()
	close(c.done)
}

func (f *Fetcher) fetch(ctx context.Context, clientID string, u *url.URL) (*Metadata, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	// First check: before anything else, so a refused host costs one DNS lookup. The dialer
	// resolves and checks again; that second answer is the one connected to.
	if _, err := f.policy.Resolve(ctx, f.resolver, u.Hostname()); err != nil {
		return nil, nil, classifyGuard(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, nil, because(ReasonBadURL, fmt.Errorf("%w: building request", ErrNotMetadataURL))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "neemias-mcp (client metadata fetcher)")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, nil, classify(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, nil, withStatus(because(ReasonRedirect, fmt.Errorf("%w: redirect (status %d) not followed", ErrFetch, resp.StatusCode)), resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, withStatus(because(ReasonStatus, fmt.Errorf("%w: status %d", ErrFetch, resp.StatusCode)), resp.StatusCode)
	}
	if !isJSONType(resp.Header.Get("Content-Type")) {
		return nil, nil, because(ReasonContentType, fmt.Errorf("%w: content type is not JSON", ErrFetch))
	}
	if resp.ContentLength > f.maxBytes {
		return nil, nil, because(ReasonTooLarge, fmt.Errorf("%w: document larger than %d bytes", ErrFetch, f.maxBytes))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err == nil && ctx.Err() != nil {
		// A body cut short by the deadline can read as a clean EOF.
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, classify(err)
	}
	if int64(len(body)) > f.maxBytes {
		return nil, nil, because(ReasonTooLarge, fmt.Errorf("%w: document larger than %d bytes", ErrFetch, f.maxBytes))
	}
	md, err := parseDocument(body, clientID)
	if err != nil {
		return nil, nil, err
	}
	return md, resp.Header, nil
}

// dial connects through the guard (resolved again, every answer checked, the socket checked
// once more); the guard's own refusals keep their classification.
func (f *Fetcher) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := f.dialer.DialContext(ctx, network, address)
	if err != nil && (errors.Is(err, netguard.ErrForbiddenAddress) || errors.Is(err, netguard.ErrUnresolved)) {
		return nil, &refusal{classifyGuard(err)}
	}
	return conn, err
}

// classifyGuard gives a refusal of the guard its reason: an address not allowed, or no
// address (unreachable).
func classifyGuard(err error) error {
	if errors.Is(err, netguard.ErrForbiddenAddress) {
		return because(ReasonAddress, err)
	}
	return because(ReasonUnreachable, fmt.Errorf("%w: %w", ErrFetch, err))
}

// refusal carries a dial-time error whose message is already safe and precise.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// classify turns a transport error into one of ours without the URL or addresses.
func classify(err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return r.err
	}
	if errors.Is(err, ErrForbiddenAddress) {
		return because(ReasonAddress, fmt.Errorf("%w: refused at connect time", ErrForbiddenAddress))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return because(ReasonUnreachable, fmt.Errorf("%w: timed out", ErrFetch))
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return because(ReasonUnreachable, fmt.Errorf("%w: TLS certificate not accepted", ErrFetch))
	}
	return because(ReasonUnreachable, fmt.Errorf("%w: connection failed", ErrFetch))
}

// isJSONType accepts application/json and application/<anything>+json.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
