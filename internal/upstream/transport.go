package upstream

import (
	"crypto/tls"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/neemias/neemias-mcp/internal/netguard"
)

// newHTTPClient returns the http.Client of one upstream: it connects only to the configured
// host and port, only to addresses the one SSRF policy (internal/netguard) accepts (loopback
// only when the configured host is loopback), checked after resolution and again on the
// socket; no proxy, no redirects, and the only credential it ever sends is the upstream's own
// token.
func newHTTPClient(u *Upstream, hostport string, loopback bool, token string) *http.Client {
	dialer := netguard.NewDialer(netguard.Policy{AllowLoopback: loopback}, nil, u.ConnectTimeout)
	dialer.Only = hostport
	var rt http.RoundTripper = &http.Transport{
		Proxy:                  nil, // a proxy would connect for us, past every check
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: u.RootCAs},
		TLSHandshakeTimeout:    u.ConnectTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
	rt = &governedTransport{next: rt, token: token}
	return &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// governedTransport sets the upstream's own credentials (and removes any other) and records,
// for the attempt in the request's context, that a response started to arrive.
type governedTransport struct {
	next  http.RoundTripper
	token string
}

func (t *governedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	req.Header.Del("Cookie")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.next.RoundTrip(req)
	if resp != nil {
		if a, ok := req.Context().Value(attemptKey{}).(*attempt); ok {
			a.responded.Store(true)
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			resp.Body.Close()
			return nil, errRedirect
		}
	}
	return resp, err
}

var errRedirect = errors.New("the upstream answered with a redirect, which is never followed")

// attempt tracks one attempt of one call.
type attempt struct {
	responded atomic.Bool // any part of a response arrived
}

type attemptKey struct{}
