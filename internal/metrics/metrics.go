// Package metrics is the server's Prometheus instrumentation (client_golang): requests by
// surface (mcp, rest, oauth, metadata, health, other), method, capability and outcome, their
// latency, authentication failures by reason, the pgx pool's figures and the check-ins
// registered. Every label value comes from a fixed list: a JSON-RPC method, tool name or path
// the server does not know collapses to "unknown", so neither a client's free text nor
// personal data can reach a label, and the series stay bounded. Hand-written.
package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// The fixed label values.
const (
	Unknown = "unknown"
	None    = "none"
	OK      = "ok"
)

// mcpMethods are the JSON-RPC methods counted by name; any other is "unknown".
var mcpMethods = []string{
	"initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
	"resources/templates/list", "completion/complete", "logging/setLevel", "prompts/list", "prompts/get",
	"server/discover",
}

var httpMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}

// Metrics holds the collectors and the registry /metrics serves. The zero value is not
// usable; a nil *Metrics is (every method does nothing), so instrumentation is optional.
type Metrics struct {
	Registry     *prometheus.Registry
	capabilities []string
	checkinID    string

	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	authFailures *prometheus.CounterVec
	checkins     prometheus.Counter
	poolOnce     sync.Once
}

// New returns the metrics of a server whose capabilities are ids; checkinID is the
// capability that registers check-ins (counted in neemias_checkins_registered_total).
func New(ids []string, checkinID string) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry(), capabilities: slices.Clone(ids), checkinID: checkinID}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neemias_requests_total",
		Help: "Requests by surface, method (JSON-RPC method on MCP, HTTP method elsewhere), capability and outcome (ok, or the error kind).",
	}, []string{"surface", "method", "capability", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "neemias_request_duration_seconds",
		Help:    "Request latency by surface, method and capability.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"surface", "method", "capability"})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neemias_auth_failures_total",
		Help: "Refused credentials by surface and reason (missing, expired, revoked, disabled, audience, signature, lifetime, api_key_on_mcp, invalid, unavailable; denied: a valid token of an unlinked, disabled or ambiguous account, answered 403).",
	}, []string{"surface", "reason"})
	m.checkins = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neemias_checkins_registered_total",
		Help: "Successful check-in registrations (a repeated check-in of the same child counts again).",
	})
	m.Registry.MustRegister(m.requests, m.duration, m.authFailures, m.checkins,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObservePool exports pool's figures (neemias_db_pool_*); once per Metrics.
func (m *Metrics) ObservePool(pool *pgxpool.Pool) {
	if m == nil {
		return
	}
	m.poolOnce.Do(func() {
		gauge := func(name, help string, f func(*pgxpool.Stat) float64) prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neemias_db_pool_" + name, Help: help}, func() float64 { return f(pool.Stat()) })
		}
		counter := func(name, help string, f func(*pgxpool.Stat) float64) prometheus.Collector {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "neemias_db_pool_" + name, Help: help}, func() float64 { return f(pool.Stat()) })
		}
		m.Registry.MustRegister(
			gauge("acquired_conns", "Connections in use.", func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
			gauge("idle_conns", "Idle connections.", func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
			gauge("total_conns", "Open connections.", func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) }),
			gauge("max_conns", "The pool's size limit.", func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
			counter("acquires_total", "Connection acquisitions.", func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
			counter("empty_acquires_total", "Acquisitions that had to wait for a connection.", func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
			counter("acquire_wait_seconds_total", "Time spent waiting for connections.", func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() }),
			counter("canceled_acquires_total", "Acquisitions canceled by their context.", func(s *pgxpool.Stat) float64 { return float64(s.CanceledAcquireCount()) }),
		)
	})
}

// labels are one request's, filled in by the layers that know them.
type labels struct {
	mu                          sync.Mutex
	surface, method, capability string
	outcome                     string
	authReason                  string
}

type labelsKey struct{}

func from(ctx context.Context) *labels {
	l, _ := ctx.Value(labelsKey{}).(*labels)
	return l
}

// SetMCPMethod records the JSON-RPC method of the MCP request on ctx (unknown methods
// collapse to "unknown").
func SetMCPMethod(ctx context.Context, method string) {
	if l := from(ctx); l != nil {
		if !slices.Contains(mcpMethods, method) {
			method = Unknown
		}
		l.mu.Lock()
		l.method = method
		l.mu.Unlock()
	}
}

// Middleware counts and times every request it wraps.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		l := &labels{surface: httpx.Surface(r.URL.Path), capability: None}
		if l.surface != httpx.SurfaceMCP {
			l.method = r.Method
			if !slices.Contains(httpMethods, l.method) {
				l.method = Unknown
			}
		}
		sw := httpx.RecordStatus(w)
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), labelsKey{}, l)))
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.method == "" {
			l.method = Unknown // an MCP request refused before its method was read
		}
		outcome := l.outcome
		if outcome == "" {
			outcome = outcomeOf(sw.Status())
		}
		m.requests.WithLabelValues(l.surface, l.method, l.capability, outcome).Inc()
		m.duration.WithLabelValues(l.surface, l.method, l.capability).Observe(time.Since(start).Seconds())
		denied := sw.Status() == http.StatusForbidden && l.authReason == "denied" // valid token, account refused
		if (sw.Status() == http.StatusUnauthorized || denied) && (l.surface == httpx.SurfaceMCP || l.surface == httpx.SurfaceREST) {
			reason := l.authReason
			if reason == "" {
				reason = "missing"
				if r.Header.Get("Authorization") != "" {
					reason = "invalid"
				}
			}
			m.authFailures.WithLabelValues(l.surface, reason).Inc()
		}
	})
}

// outcomeOf is the outcome of a request no capability described, by its status.
func outcomeOf(status int) string {
	switch {
	case status < 400:
		return OK
	case status == http.StatusUnauthorized:
		return errs.KindUnauthenticated.String()
	case status == http.StatusForbidden:
		return errs.KindForbidden.String()
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		return errs.KindNotFound.String()
	case status == http.StatusConflict:
		return errs.KindConflict.String()
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status == http.StatusServiceUnavailable:
		return "unavailable"
	case status == http.StatusNotImplemented:
		return errs.KindNotImplemented.String()
	case status < 500:
		return errs.KindInvalid.String()
	}
	return errs.KindInternal.String()
}

// capabilityLabel is id when the server has it, else "unknown".
func (m *Metrics) capabilityLabel(id string) string {
	if slices.Contains(m.capabilities, id) {
		return id
	}
	return Unknown
}

// WrapCall instruments the pipeline's CallFunc: the request's capability and outcome (ok, or
// errs.KindOf's name), and the check-ins registered.
func (m *Metrics) WrapCall(call pipeline.CallFunc) pipeline.CallFunc {
	if m == nil {
		return call
	}
	return func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
		out, err := call(ctx, p, args)
		m.record(ctx, p.Capability(), err)
		if err == nil && p.Capability() == m.checkinID {
			m.checkins.Inc()
		}
		return out, err
	}
}

// WrapRefusal instruments the pipeline's refusal hook: a call refused for a missing scope
// still names its capability.
func (m *Metrics) WrapRefusal(next pipeline.RefusalHook) pipeline.RefusalHook {
	if m == nil {
		return next
	}
	return func(ctx context.Context, id string, args json.RawMessage, err error) {
		m.record(ctx, id, err)
		if next != nil {
			next(ctx, id, args, err)
		}
	}
}

func (m *Metrics) record(ctx context.Context, id string, err error) {
	l := from(ctx)
	if l == nil {
		return
	}
	outcome := OK
	if err != nil {
		outcome = errs.KindOf(err).String()
	}
	l.mu.Lock()
	l.capability, l.outcome = m.capabilityLabel(id), outcome
	l.mu.Unlock()
}

// WrapVerifier records why credentials are refused.
func (m *Metrics) WrapVerifier(v authn.Verifier) authn.Verifier {
	if m == nil {
		return v
	}
	return authn.VerifierFunc(func(ctx context.Context, token string) (principal.Principal, error) {
		p, err := v.Verify(ctx, token)
		if err != nil {
			if l := from(ctx); l != nil {
				l.mu.Lock()
				l.authReason = AuthReason(err)
				l.mu.Unlock()
			}
		}
		return p, err
	})
}

// AuthReason classifies a verifier's error into a fixed reason.
func AuthReason(err error) string {
	if errors.Is(err, authn.ErrAccessDenied) {
		return "denied" // a valid token of an account that may not use the server (403)
	}
	if !errors.Is(err, authn.ErrInvalidToken) {
		return "unavailable"
	}
	msg := err.Error()
	for _, r := range []struct{ needle, reason string }{
		{"expired", "expired"}, {"revoked", "revoked"}, {"disabled", "disabled"}, {"audience", "audience"},
		{"signature", "signature"}, {"key id", "signature"}, {"lifetime", "lifetime"},
	} {
		if strings.Contains(msg, r.needle) {
			return r.reason
		}
	}
	return "invalid"
}

// KnownMCPMethod reports whether method is one counted by name.
func KnownMCPMethod(method string) bool { return slices.Contains(mcpMethods, method) }

// SetAuthReason records why the request's credential was refused, when a layer other than the
// verifier refuses it (e.g. "api_key_on_mcp").
func SetAuthReason(ctx context.Context, reason string) {
	if l := from(ctx); l != nil {
		l.mu.Lock()
		l.authReason = reason
		l.mu.Unlock()
	}
}
