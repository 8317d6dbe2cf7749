package upstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/netguard"
	"github.com/neemias/neemias-mcp/internal/pii"
)

// KnownValuesFunc returns a church's known values for the scanner (pii.Loader.ForChurch);
// nil values mean the pattern detectors only.
type KnownValuesFunc func(ctx context.Context, church uuid.UUID) (*pii.KnownValues, error)

// Options are the collaborators of a [Client].
type Options struct {
	// Known supplies the caller's church's known values; nil: pattern detectors only.
	Known KnownValuesFunc
	// Auditor records every invocation; nil: nothing is recorded (tests and the check
	// command only: the server always passes one).
	Auditor Auditor
	// Now is the clock of audit events; nil: time.Now.
	Now func() time.Time
}

// Client is the governed client of the allowlisted upstream MCP servers. Safe for concurrent
// use; one MCP session per upstream, opened on first use and replaced when it breaks.
type Client struct {
	enabled bool
	opts    Options
	backoff time.Duration
	ups     map[string]*remote
	order   []string
	sdk     *sdk.Client
}

// remote is one upstream and its session.
type remote struct {
	cfg     Upstream
	exposed map[string]bool
	http    *httpClientHolder

	mu    sync.Mutex
	sess  *sdk.ClientSession
	tools map[string]*sdk.Tool // from tools/list at connect time
}

type httpClientHolder struct {
	transport *sdk.StreamableClientTransport
}

// ErrDisabled is returned by every call of a client whose feature flag is off.
var ErrDisabled = errors.New("upstream MCP servers are disabled (enable with --upstreams on or NEEMIAS_UPSTREAMS=on)")

// New validates cfg and returns a client. With cfg.Enabled false it returns at once a client
// that refuses everything: nothing is validated or read, no connection is ever opened. No
// connection is opened by New in any case.
func New(cfg Config, opts Options) (*Client, error) {
	c := &Client{opts: opts, ups: map[string]*remote{}}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	if !cfg.Enabled {
		return c, nil
	}
	c.enabled = true
	c.backoff = cfg.Backoff
	if c.backoff <= 0 {
		c.backoff = DefaultBackoff
	}
	for _, u := range cfg.Upstreams {
		u.Tools = slices.Clone(u.Tools)
		pu, loopback, err := u.validate()
		if err != nil {
			return nil, fmt.Errorf("upstream config: %w", err)
		}
		if _, dup := c.ups[u.ID]; dup {
			return nil, fmt.Errorf("upstream config: id %q given twice", u.ID)
		}
		tok, err := readToken(u.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("upstream config: upstream %q: %w", u.ID, err)
		}
		r := &remote{cfg: u, exposed: map[string]bool{}}
		for _, t := range u.Tools {
			r.exposed[t] = true
		}
		r.http = &httpClientHolder{transport: &sdk.StreamableClientTransport{
			Endpoint:             u.URL,
			HTTPClient:           newHTTPClient(&r.cfg, hostPort(pu), loopback, tok),
			MaxRetries:           -1, // retries are ours, and only where safe
			DisableStandaloneSSE: true,
		}}
		c.ups[u.ID] = r
		c.order = append(c.order, u.ID)
	}
	c.sdk = sdk.NewClient(&sdk.Implementation{Name: "neemias-mcp-upstream", Version: "1"}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: an upstream may not call back into the caller.
		Capabilities: &sdk.ClientCapabilities{},
	})
	c.sdk.AddSendingMiddleware(scanMiddleware)
	c.sdk.AddReceivingMiddleware(refuseServerRequests)
	return c, nil
}

func hostPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return net.JoinHostPort(u.Hostname(), p)
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// Enabled reports the feature flag.
func (c *Client) Enabled() bool { return c.enabled }

// Upstreams returns the configured upstream ids in configuration order.
func (c *Client) Upstreams() []string { return slices.Clone(c.order) }

// Close closes every open session.
func (c *Client) Close() error {
	for _, r := range c.ups {
		r.mu.Lock()
		if r.sess != nil {
			_ = r.sess.Close()
			r.sess = nil
		}
		r.mu.Unlock()
	}
	return nil
}

// Error is a governed call's failure. Its message names the upstream and, for personal data,
// the detector and the JSON path, never a value.
type Error struct {
	Upstream string
	Tool     string
	Outcome  Outcome
	Reason   Reason
	// Direction and Findings for ReasonPIIDetected.
	Direction Direction
	Findings  []pii.Finding
	Attempts  int
	msg       string
	err       error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// CallTool calls tool of upstream for caller, governed: allowlist before any connection,
// personal-data scan of the arguments (before sending) and of the result, retries only for
// read-only or idempotent tools, one audit event. A refusal or failure is an *Error.
func (c *Client) CallTool(ctx context.Context, caller Caller, upstream, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	if !c.enabled {
		return nil, ErrDisabled
	}
	ev := Event{Caller: caller, Upstream: upstream, Tool: tool}
	r, ok := c.ups[upstream]
	if !ok || !r.exposed[tool] {
		e := &Error{Upstream: upstream, Tool: tool, Outcome: OutcomeRefused, Reason: ReasonNotAllowlisted,
			msg: fmt.Sprintf("upstream %q tool %q is not allowlisted (reason not_allowlisted)", upstream, tool)}
		return nil, c.finish(ctx, ev, nil, e)
	}
	var known *pii.KnownValues
	if c.opts.Known != nil && caller.ChurchID != uuid.Nil {
		k, err := c.opts.Known(ctx, caller.ChurchID)
		if err != nil {
			e := &Error{Upstream: upstream, Tool: tool, Outcome: OutcomeFailed, err: err,
				msg: fmt.Sprintf("upstream %q: the personal-data scanner could not load the church's values, nothing was sent", upstream)}
			return nil, c.finish(ctx, ev, nil, e)
		}
		known = k
	}
	gs := &govern{upstream: upstream, tool: tool, scanner: pii.NewScanner(known), policy: r.cfg.PII}
	// The arguments are scanned before any connection is opened (and again by the sending
	// middleware, which is what guards every tools/call on the wire).
	pre := &sdk.CallToolParams{Name: tool, Arguments: args}
	if err := gs.scanArguments(pre); err != nil {
		var ge *Error
		if !errors.As(err, &ge) {
			ge = &Error{Upstream: upstream, Tool: tool, Outcome: OutcomeFailed, err: err, msg: err.Error()}
		}
		return nil, c.finish(ctx, ev, nil, ge)
	}
	res, attempts, err := c.callWithRetry(ctx, r, gs, tool, pre.Arguments)
	ev.Attempts = attempts
	if err != nil {
		var ge *Error
		if !errors.As(err, &ge) {
			ge = &Error{Upstream: upstream, Tool: tool, Outcome: OutcomeFailed, err: err, msg: err.Error()}
		}
		ge.Attempts = attempts
		return nil, c.finish(ctx, ev, nil, ge)
	}
	if gs.redacted != "" {
		ev.Redacted, ev.Direction, ev.Findings = true, gs.redacted, gs.findings
	}
	if err := c.finish(ctx, ev, res, nil); err != nil {
		return nil, err
	}
	return res, nil
}

// finish audits the outcome and returns the call's error (or the audit failure).
func (c *Client) finish(ctx context.Context, ev Event, _ *sdk.CallToolResult, e *Error) error {
	ev.Time = c.opts.Now().UTC()
	ev.Outcome = OutcomeAllowed
	if e != nil {
		ev.Outcome, ev.Reason, ev.Attempts = e.Outcome, e.Reason, e.Attempts
		if e.Reason == ReasonPIIDetected {
			ev.Direction, ev.Findings = e.Direction, e.Findings
		}
	}
	if c.opts.Auditor != nil {
		if err := c.opts.Auditor.Record(ctx, ev); err != nil {
			return &Error{Upstream: ev.Upstream, Tool: ev.Tool, Outcome: OutcomeFailed, err: err,
				msg: fmt.Sprintf("upstream %q: the call could not be audited, so its result is withheld", ev.Upstream)}
		}
	}
	if e == nil {
		return nil
	}
	return e
}

// callWithRetry makes up to 1+MaxRetries attempts. A failure to connect is always retried
// (nothing of the call was sent); a failed call is repeated only for a tool annotated
// readOnlyHint, or idempotentHint when no part of the response had arrived.
func (c *Client) callWithRetry(ctx context.Context, r *remote, gs *govern, tool string, args any) (*sdk.CallToolResult, int, error) {
	var last error
	n := 0
	for n < 1+MaxRetries {
		if n > 0 {
			if err := sleep(ctx, c.delay(n)); err != nil {
				break
			}
		}
		n++
		actx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
		sess, tools, err := c.session(actx, r)
		if err != nil {
			cancel()
			last = fmt.Errorf("connecting: %w", err)
			if ctx.Err() != nil || errors.Is(err, errRedirect) || isForbidden(err) {
				break
			}
			continue
		}
		t := tools[tool]
		if t == nil {
			cancel()
			return nil, n, &Error{Upstream: gs.upstream, Tool: tool, Outcome: OutcomeRefused, Reason: ReasonNotOffered,
				msg: fmt.Sprintf("upstream %q does not offer tool %q (reason not_offered)", gs.upstream, tool)}
		}
		at := &attempt{}
		cctx := context.WithValue(context.WithValue(actx, attemptKey{}, at), governKey{}, gs)
		res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		cancel()
		if err == nil {
			return res, n, nil
		}
		var ge *Error
		if errors.As(err, &ge) { // personal data: never retried
			return nil, n, ge
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code != codeRejectedByTransport && !errors.Is(err, errRedirect) {
			// The upstream answered with a protocol error: repeating it changes nothing.
			return nil, n, &Error{Upstream: gs.upstream, Tool: tool, Outcome: OutcomeFailed, err: err,
				msg: fmt.Sprintf("upstream %q refused the call of %q: %s", gs.upstream, tool, gs.safeMessage(rpcErr))}
		}
		r.drop(sess)
		last = err
		if ctx.Err() != nil || errors.Is(err, errRedirect) {
			break
		}
		a := t.Annotations
		retryable := a != nil && (a.ReadOnlyHint || (a.IdempotentHint && !at.responded.Load()))
		if !retryable {
			break
		}
	}
	return nil, n, &Error{Upstream: gs.upstream, Tool: tool, Outcome: OutcomeFailed, err: last,
		msg: fmt.Sprintf("upstream %q is unavailable (tool %q, %d attempt(s)): %s", gs.upstream, tool, n, describe(last))}
}

// delay is the backoff before attempt n+1: base·2^(n-1), jittered over its upper half.
func (c *Client) delay(n int) time.Duration {
	d := c.backoff << (n - 1)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Tools returns the allowlisted tools the upstream offers, by name, as its tools/list
// answered when the session was opened (connecting first when needed): their input schemas
// and annotations, for the server's own listing. A tool of the allowlist the upstream does
// not offer is absent.
func (c *Client) Tools(ctx context.Context, upstream string) (map[string]*sdk.Tool, error) {
	if !c.enabled {
		return nil, ErrDisabled
	}
	r, ok := c.ups[upstream]
	if !ok {
		return nil, fmt.Errorf("upstream %q is not configured", upstream)
	}
	_, tools, err := c.session(ctx, r)
	if err != nil {
		return nil, &Error{Upstream: upstream, Outcome: OutcomeFailed, err: err,
			msg: fmt.Sprintf("upstream %q is unavailable (listing its tools): %s", upstream, describe(err))}
	}
	out := map[string]*sdk.Tool{}
	for n, t := range tools {
		if r.exposed[n] {
			out[n] = t
		}
	}
	return out, nil
}

// session returns r's open session, connecting and listing its tools first when needed.
func (c *Client) session(ctx context.Context, r *remote) (*sdk.ClientSession, map[string]*sdk.Tool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		return r.sess, r.tools, nil
	}
	sess, err := c.sdk.Connect(ctx, r.http.transport, nil)
	if err != nil {
		return nil, nil, err
	}
	tools := map[string]*sdk.Tool{}
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			_ = sess.Close()
			return nil, nil, fmt.Errorf("listing tools: %w", err)
		}
		tools[t.Name] = t
	}
	r.sess, r.tools = sess, tools
	return sess, tools, nil
}

// drop forgets sess if it is still r's session, and closes it in the background.
func (r *remote) drop(sess *sdk.ClientSession) {
	r.mu.Lock()
	if r.sess == sess {
		r.sess, r.tools = nil, nil
	}
	r.mu.Unlock()
	go sess.Close()
}

// codeRejectedByTransport is go-sdk's jsonrpc2.ErrRejected: the HTTP exchange failed (a
// transient status such as 503), not an answer of the upstream's MCP layer.
const codeRejectedByTransport = -32005

func isForbidden(err error) bool {
	return errors.Is(err, netguard.ErrForbiddenAddress)
}

// describe turns a transport error into a short reason without URLs or addresses.
func describe(err error) string {
	var ne net.Error
	var oe *net.OpError
	switch {
	case err == nil:
		return "no attempt was made"
	case errors.Is(err, errRedirect):
		return errRedirect.Error()
	case isForbidden(err):
		return "its address is not allowed (SSRF rules)"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &oe) && oe.Op == "dial":
		return "connection refused or unreachable"
	case errors.Is(err, sdk.ErrSessionMissing):
		return "its session ended"
	case errors.Is(err, sdk.ErrConnectionClosed):
		return "the connection closed"
	}
	return "the connection failed or the answer was cut short"
}
