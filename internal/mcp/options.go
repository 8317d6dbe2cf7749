package mcp

import (
	"context"
	"log/slog"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// CompleteFunc suggests values for a completable URI template variable. The caller is on ctx
// (principal.From): suggestions must be limited to what that caller may see.
type CompleteFunc func(ctx context.Context, capabilityID, variable, prefix string) ([]string, error)

// Options configures NewHandler. Gate and Edge are required. What is served is the gate's catalog (pipeline.Gate.Catalog), in its order: each
// entry's metadata, schemas, scope and invoker.
type Options struct {
	// Name, Title and Version identify the server (serverInfo).
	Name, Title, Version string
	// Instructions are sent in initialize and server/discover results.
	Instructions string

	// ReadToolPrefix, when set, makes every resource and resource template also a read-only
	// tool named ReadToolPrefix + its id (gen/capapi.ToolPrefix), unless the capability says
	// NoReadTool: most clients (Claude Desktop, Cursor, n8n, LangChain) let the model call
	// tools but not read resources. The twin is the same capability: same scope, row filters,
	// redaction and audit; its input is the URI template's variables.
	ReadToolPrefix string
	// Views are the MCP Apps views (internal/views.All()): ui:// resources linked to the tools
	// of the capabilities they name. With any, the server advertises io.modelcontextprotocol/ui;
	// clients that declare it see the views and the tools' _meta.ui (see views.go). A view's
	// app-only tools are not read from here: they are the catalog's aliases naming the view
	// (capability.AppToolEntries, added by the composition root; apptools.go).
	Views []capability.View
	// Gate is the invocation pipeline over the catalog: the scope check (made at the HTTP
	// layer, so a missing scope is a 403 step-up), validation, the call, redaction and
	// encoding. A capability not in its catalog is unreachable: not listed, and answered as
	// not found.
	//
	// Two escape hatches exist for features the capability spec cannot express (used by the
	// conformance fixtures): a tool's output may be *sdk.CallToolResult and a resource's
	// *sdk.ReadResourceResult; they are sent as they are.
	Gate *pipeline.Gate
	// Complete answers completion/complete for completable template variables; nil disables
	// completions.
	Complete CompleteFunc
	// Edge is what stands in front of the endpoint, shared with REST (httpx.Edge): the
	// Host/Origin allowlist, the bearer check and its challenges, the per-caller rate limit.
	// The endpoint adds its own rules: POST only, and JSON-RPC errors that carry the request's
	// id where the edge can read it.
	Edge *httpx.Edge

	// MaxBodyBytes limits request bodies (default httpx.DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxJSONDepth limits JSON nesting (default httpx.DefaultMaxJSONDepth).
	MaxJSONDepth int
	// ListTTL is the ttlMs hint of list results (default 5 minutes); DiscoverTTL that of
	// server/discover (default 1 hour).
	ListTTL, DiscoverTTL time.Duration
	// StateKeys are the AEAD keys (32 bytes each) of requestState: the first seals, all open,
	// so keys can rotate. Replicas behind one load balancer must share them. Empty: a random key
	// per process (single replica only).
	StateKeys [][]byte
	// StateTTL bounds how long a sealed requestState stays valid (default 10 minutes).
	StateTTL time.Duration

	// Logging advertises the (deprecated) logging capability so handlers' Log calls reach
	// clients that ask for them. Off by default.
	Logging bool
	// Subscriptions accepts legacy resources/subscribe and resources/unsubscribe as no-ops. A
	// stateless server can never deliver resources/updated, so production leaves this off; the
	// conformance fixtures turn it on because the 2025 suite scores the two methods.
	Subscriptions bool
	// Extend, if set, is called on every SDK server the runtime builds, after the registry is
	// registered. It is for features the capability spec cannot express (the conformance
	// fixtures' prompts); production wiring leaves it nil.
	Extend func(*sdk.Server)

	// EngineOnly turns the fast path off (fastpath.go): every request goes to the SDK engine.
	// The zero value leaves it on. It is the reference side of the differential test
	// (wire_fastpath_diff_test.go) and an escape hatch (serve --mcp-engine-only).
	EngineOnly bool

	// Observe, when set, is told the JSON-RPC method of every request and the W3C trace
	// context of its _meta (traceparent, tracestate; "" when absent), and returns the context
	// the request continues with: how metrics and traces learn what HTTP alone cannot say.
	Observe func(ctx context.Context, method, traceparent, tracestate string) context.Context
	// Logger receives server-side diagnostics (internal errors with their correlation id).
	Logger *slog.Logger
}
