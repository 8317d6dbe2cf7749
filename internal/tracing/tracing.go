// Package tracing is the server's OpenTelemetry tracing: a span per HTTP request (its parent
// the request's traceparent header), per MCP method (its parent the traceparent of the
// 2026-07-28 request's _meta when there is one, so a client's trace continues through the
// server), per capability invocation and per SQL statement (otelpgx on the pgx pool; query
// text only, never its parameters). Spans are exported by OTLP over HTTP when an endpoint is
// configured and not made at all otherwise (the no-op provider). Span names and attributes
// carry no personal data: paths of the fixed routes, methods, capability ids, error kinds.
// Hand-written.
package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// Name is the instrumentation scope of the server's spans.
const Name = "github.com/neemias/neemias-mcp"

var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Setup returns the tracer provider of endpoint (OTLP/HTTP: a URL, or host:port with
// insecure choosing http) and its shutdown; with no endpoint, the no-op provider.
func Setup(ctx context.Context, endpoint string, insecure bool, version string) (trace.TracerProvider, func(context.Context) error, error) {
	if endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+pathOr(u.Path)))
	} else {
		opts = append(opts, otlptracehttp.WithEndpoint(endpoint))
		if insecure {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", endpoint, err)
	}
	tp := NewProvider(sdktrace.NewBatchSpanProcessor(exp), version)
	return tp, tp.Shutdown, nil
}

// pathOr appends the OTLP traces path to an endpoint URL given without one.
func pathOr(p string) string {
	if p == "" || p == "/" {
		return "/v1/traces"
	}
	return ""
}

// Provider is an SDK tracer provider; Shutdown flushes it.
type Provider = sdktrace.TracerProvider

// NewProvider returns an SDK provider exporting through sp (tests pass a tracetest
// recorder or an in-memory exporter's syncer).
func NewProvider(sp sdktrace.SpanProcessor, version string) *Provider {
	res := resource.NewSchemaless(attribute.String("service.name", "neemias-mcp"), attribute.String("service.version", version))
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp), sdktrace.WithResource(res))
}

// PoolTracer sets the pgx tracer of cfg: a span per statement (text only; otelpgx leaves the
// parameters out unless asked).
func PoolTracer(cfg *pgxpool.Config, tp trace.TracerProvider) {
	cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(tp), otelpgx.WithTrimSQLInSpanName())
}

// Middleware is the HTTP span of every request, joined to the caller's traceparent header.
func Middleware(tp trace.TracerProvider, next http.Handler) http.Handler {
	tr := tp.Tracer(Name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		surface := httpx.Surface(r.URL.Path)
		route := r.URL.Path
		if surface == httpx.SurfaceREST || surface == httpx.SurfaceOther {
			route = surface // paths of REST carry ids; other paths are anyone's free text
		}
		ctx, span := tr.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("neemias.surface", surface)))
		defer span.End()
		sw := httpx.RecordStatus(w)
		inner := &innerSpan{}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(ctx, innerKey{}, inner)))
		if inner.span != nil {
			inner.span.End()
		}
		span.SetAttributes(attribute.Int("http.response.status_code", sw.Status()))
		if sw.Status() >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.Status()))
		}
	})
}

// ObserveMCP is the mcp.Options.Observe of traces: a span for the JSON-RPC method whose
// parent is the _meta trace context when valid (a link keeps the HTTP span reachable), else
// the HTTP span. Unknown methods are named "unknown".
func ObserveMCP(tp trace.TracerProvider) func(ctx context.Context, method, traceparent, tracestate string) context.Context {
	tr := tp.Tracer(Name)
	return func(ctx context.Context, method, traceparent, tracestate string) context.Context {
		if !metrics.KnownMCPMethod(method) {
			method = metrics.Unknown
		}
		opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method))}
		parent := ctx
		if traceparent != "" {
			carrier := propagation.MapCarrier{"traceparent": traceparent}
			if tracestate != "" {
				carrier["tracestate"] = tracestate
			}
			if remote := (propagation.TraceContext{}).Extract(context.Background(), carrier); trace.SpanContextFromContext(remote).IsValid() {
				opts = append(opts, trace.WithLinks(trace.LinkFromContext(ctx)))
				parent = trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(remote))
			}
		}
		inner, _ := ctx.Value(innerKey{}).(*innerSpan)
		if inner == nil || inner.span != nil {
			return ctx // outside Middleware, or a second call: no span that nobody would end
		}
		ctx, inner.span = tr.Start(parent, "mcp "+method, opts...)
		return ctx
	}
}

// innerSpan is the MCP span of a request, ended by Middleware when the response is done.
type innerSpan struct{ span trace.Span }

type innerKey struct{}

// WrapCall is a span per capability invocation, with its outcome (ok or the error kind).
func WrapCall(tp trace.TracerProvider, call pipeline.CallFunc) pipeline.CallFunc {
	tr := tp.Tracer(Name)
	return func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
		ctx, span := tr.Start(ctx, "capability "+p.Capability(), trace.WithAttributes(attribute.String("neemias.capability", p.Capability())))
		defer span.End()
		out, err := call(ctx, p, args)
		if err != nil {
			kind := errs.KindOf(err)
			span.SetAttributes(attribute.String("neemias.outcome", kind.String()))
			if kind == errs.KindInternal {
				span.SetStatus(codes.Error, "internal") // never err.Error(): it may quote data
			}
		} else {
			span.SetAttributes(attribute.String("neemias.outcome", "ok"))
		}
		return out, err
	}
}
