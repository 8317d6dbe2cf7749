package upstream

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// Mode is the personal-data policy of one direction of an upstream's traffic.
type Mode string

const (
	// Enforce refuses: a request carrying personal data is never sent, a response carrying it
	// is dropped. The default.
	Enforce Mode = "enforce"
	// Redact replaces every finding's text with "[redacted <detector>]" and lets the rest
	// through (pii.Scanner.Redact).
	Redact Mode = "redact"
)

// Policy is the personal-data policy of an upstream, per direction.
type Policy struct {
	Request  Mode // arguments sent to the upstream
	Response Mode // results received from it
}

// Defaults of [Upstream]'s timeouts and [Config.Backoff].
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultCallTimeout    = 30 * time.Second
	DefaultBackoff        = 200 * time.Millisecond
	// MaxRetries is how many times a failed call of a read-only or idempotent tool is
	// repeated (so at most 3 attempts).
	MaxRetries = 2
)

// Upstream is one allowlisted upstream MCP server.
type Upstream struct {
	// ID names the upstream in audit entries, errors and capability names:
	// [a-z][a-z0-9_-]{0,31}.
	ID string
	// URL is the Streamable HTTP endpoint, exactly, in canonical form (lower-case scheme and
	// host, no default port, no userinfo, query or fragment): https, or http on a loopback
	// host (127.0.0.0/8, ::1, localhost).
	URL string
	// Transport must be empty or "streamable-http"; "stdio" (and any Command) is refused.
	Transport string
	// Command exists only to be refused with a clear error: stdio servers are not supported.
	Command []string
	// Tools are the upstream's tools that may be called, by exact name. Never "all": an empty
	// list or "*" is refused.
	Tools []string
	// PII is the personal-data policy; empty modes are Enforce.
	PII Policy
	// BearerTokenFile holds a static bearer token for the upstream (whitespace trimmed), read
	// once by New; empty: no credentials. The caller's own Neemias token is never sent.
	BearerTokenFile string
	// ConnectTimeout bounds each TCP connect and TLS handshake; CallTimeout bounds one
	// attempt of a call (connecting included). Zero: the defaults.
	ConnectTimeout, CallTimeout time.Duration
	// RootCAs replaces the system trust roots for this upstream (an operator's private CA).
	RootCAs *x509.CertPool
}

// Config is the governed client's configuration: runtime settings, never in the spec.
type Config struct {
	// Enabled is the feature flag (--upstreams, NEEMIAS_UPSTREAMS=on), off by default: when
	// false, New ignores everything else and returns a client that refuses every call and
	// never opens a connection.
	Enabled   bool
	Upstreams []Upstream
	// Backoff is the base delay before the first retry (doubled for the second, with full
	// jitter over its upper half). Zero: DefaultBackoff.
	Backoff time.Duration
}

var idRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// toolNameRE is the MCP tool-name rule (SEP-986): 1 to 128 of [A-Za-z0-9_.-].
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`)

// ErrStdio is returned (wrapped) for an upstream configured as a local command.
var ErrStdio = errors.New("stdio upstream servers are not supported: only Streamable HTTP URLs may be allowlisted")

// validate checks u and returns its parsed URL and whether its host is loopback.
func (u *Upstream) validate() (*url.URL, bool, error) {
	if !idRE.MatchString(u.ID) {
		return nil, false, fmt.Errorf("upstream id %q: must match [a-z][a-z0-9_-]{0,31}", u.ID)
	}
	if len(u.Command) > 0 || strings.EqualFold(u.Transport, "stdio") {
		return nil, false, fmt.Errorf("upstream %q: %w", u.ID, ErrStdio)
	}
	if u.Transport != "" && u.Transport != "streamable-http" {
		return nil, false, fmt.Errorf("upstream %q: unknown transport %q (only streamable-http)", u.ID, u.Transport)
	}
	pu, loopback, err := canonicalURL(u.URL)
	if err != nil {
		return nil, false, fmt.Errorf("upstream %q: %w", u.ID, err)
	}
	if len(u.Tools) == 0 {
		return nil, false, fmt.Errorf("upstream %q: no tools listed: name each exposed tool explicitly", u.ID)
	}
	seen := map[string]bool{}
	for _, t := range u.Tools {
		if t == "*" || strings.EqualFold(t, "all") {
			return nil, false, fmt.Errorf("upstream %q: tool %q: list each exposed tool by name, never all of them", u.ID, t)
		}
		if !toolNameRE.MatchString(t) {
			return nil, false, fmt.Errorf("upstream %q: tool %q is not a valid MCP tool name", u.ID, t)
		}
		if seen[t] {
			return nil, false, fmt.Errorf("upstream %q: tool %q listed twice", u.ID, t)
		}
		seen[t] = true
	}
	for _, m := range []*Mode{&u.PII.Request, &u.PII.Response} {
		switch *m {
		case "":
			*m = Enforce
		case Enforce, Redact:
		default:
			return nil, false, fmt.Errorf("upstream %q: unknown PII mode %q (enforce or redact)", u.ID, *m)
		}
	}
	if u.ConnectTimeout < 0 || u.CallTimeout < 0 {
		return nil, false, fmt.Errorf("upstream %q: negative timeout", u.ID)
	}
	if u.ConnectTimeout == 0 {
		u.ConnectTimeout = DefaultConnectTimeout
	}
	if u.CallTimeout == 0 {
		u.CallTimeout = DefaultCallTimeout
	}
	return pu, loopback, nil
}

// canonicalURL parses raw and refuses it unless it is exactly its canonical form, https or
// http on loopback.
func canonicalURL(raw string) (*url.URL, bool, error) {
	if raw == "" {
		return nil, false, errors.New("no URL")
	}
	if !strings.Contains(raw, "://") {
		return nil, false, fmt.Errorf("URL %q is not an absolute http(s) URL (a command? %w)", raw, ErrStdio)
	}
	pu, err := url.Parse(raw)
	if err != nil {
		return nil, false, fmt.Errorf("URL does not parse: %w", err)
	}
	if pu.User != nil || pu.RawQuery != "" || pu.ForceQuery || pu.Fragment != "" || pu.Opaque != "" {
		return nil, false, errors.New("URL must not have userinfo, a query or a fragment")
	}
	host := pu.Hostname()
	if host == "" {
		return nil, false, errors.New("URL has no host")
	}
	loopback := host == "localhost"
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return nil, false, errors.New("URL host is a scoped IPv6 address")
		}
		loopback = a.Unmap().IsLoopback()
	}
	switch pu.Scheme {
	case "https":
	case "http":
		if !loopback {
			return nil, false, errors.New("URL must be https (plain http only on a loopback host)")
		}
	default:
		return nil, false, fmt.Errorf("URL scheme %q: only https (or http on loopback)", pu.Scheme)
	}
	c := *pu
	c.Host = strings.ToLower(c.Host)
	if p := c.Port(); (c.Scheme == "https" && p == "443") || (c.Scheme == "http" && p == "80") {
		c.Host = strings.TrimSuffix(c.Host, ":"+p)
	}
	if c.Path == "" {
		c.Path = "/"
	}
	if canon := c.String(); canon != raw {
		return nil, false, fmt.Errorf("URL %q is not in canonical form; write it exactly as %q", raw, canon)
	}
	return pu, loopback, nil
}

// readToken reads a bearer token file.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the bearer token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, "\r\n\t ") {
		return "", errors.New("the bearer token file must hold one token")
	}
	return tok, nil
}

// ParseFlags builds upstreams from command-line style values: urls "id=URL", tools
// "id=a,b,c", tokenFiles "id=path", pii "id=request:enforce,response:redact" (either part
// may be left out). Every id named by tools, tokenFiles or pii must have a URL.
func ParseFlags(urls, tools, tokenFiles, pii []string) ([]Upstream, error) {
	var ups []Upstream
	index := map[string]int{}
	for _, kv := range urls {
		id, v, ok := strings.Cut(kv, "=")
		if !ok || id == "" || v == "" {
			return nil, fmt.Errorf("--upstream %q: want id=URL", kv)
		}
		if _, dup := index[id]; dup {
			return nil, fmt.Errorf("--upstream: id %q given twice", id)
		}
		index[id] = len(ups)
		ups = append(ups, Upstream{ID: id, URL: v})
	}
	lookup := func(flag, kv string) (*Upstream, string, error) {
		id, v, ok := strings.Cut(kv, "=")
		if !ok || id == "" {
			return nil, "", fmt.Errorf("%s %q: want id=value", flag, kv)
		}
		i, ok := index[id]
		if !ok {
			return nil, "", fmt.Errorf("%s %q: no --upstream %s=URL", flag, kv, id)
		}
		return &ups[i], v, nil
	}
	for _, kv := range tools {
		u, v, err := lookup("--upstream-tools", kv)
		if err != nil {
			return nil, err
		}
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				u.Tools = append(u.Tools, t)
			}
		}
	}
	for _, kv := range tokenFiles {
		u, v, err := lookup("--upstream-token-file", kv)
		if err != nil {
			return nil, err
		}
		u.BearerTokenFile = v
	}
	for _, kv := range pii {
		u, v, err := lookup("--upstream-pii", kv)
		if err != nil {
			return nil, err
		}
		for _, part := range strings.Split(v, ",") {
			dir, mode, _ := strings.Cut(strings.TrimSpace(part), ":")
			switch dir {
			case "request":
				u.PII.Request = Mode(mode)
			case "response":
				u.PII.Response = Mode(mode)
			default:
				return nil, fmt.Errorf("--upstream-pii %q: want request:MODE and/or response:MODE", kv)
			}
		}
	}
	return ups, nil
}

// ParseFlag reads the feature flag's value: on/true/1 or off/false/0/empty.
func ParseFlag(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off", "false", "0", "no":
		return false, nil
	case "on", "true", "1", "yes":
		return true, nil
	}
	return false, fmt.Errorf("upstreams flag %q: want on or off", v)
}
