package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
)

// InvokeFunc runs one capability: gen/capapi.Invoke bound to the hand-written handler. args is
// a JSON object already validated against the capability's input schema; granted are the
// caller's effective scopes (for redaction). The result must marshal to JSON conforming to the
// capability's output schema.
//
// Two escape hatches exist for features the capability spec cannot express (used by the
// conformance fixtures): a tool may return *sdk.CallToolResult and a resource
// *sdk.ReadResourceResult; they are sent as they are (no output validation).
type InvokeFunc func(ctx context.Context, capabilityID string, args json.RawMessage, granted capability.ScopeSet) (any, error)

// CompleteFunc suggests values for a completable URI template variable. The caller is on ctx
// (principal.From): suggestions must be limited to what that caller may see.
type CompleteFunc func(ctx context.Context, capabilityID, variable, prefix string) ([]string, error)

// Options configures NewHandler. Capabilities, Invoke, InputSchema, Verifier,
// ResourceMetadataURL and AllowedHosts are required.
type Options struct {
	// Name, Title and Version identify the server (serverInfo).
	Name, Title, Version string
	// Instructions are sent in initialize and server/discover results.
	Instructions string

	// Capabilities is the registry, in spec order (gen/capapi.Capabilities()).
	Capabilities []capability.Capability
	// Invoke runs a capability (gen/capapi.Invoke bound to the implementation).
	Invoke InvokeFunc
	// Complete answers completion/complete for completable template variables; nil disables
	// completions.
	Complete CompleteFunc
	// InputSchema and OutputSchema return the generated JSON Schemas (gen/schemas.Input and
	// Output). InputSchema must return an object schema for every capability; OutputSchema may
	// return nil for a capability without declared output.
	InputSchema  func(capabilityID string) json.RawMessage
	OutputSchema func(capabilityID string) json.RawMessage
	// RequiredScope returns the scope a capability needs (gen/scopes.Required). Unknown
	// capabilities must return false: they are then unreachable. Nil uses Capability.Scope.
	RequiredScope func(capabilityID string) (string, bool)
	// RoleScopes returns the scopes a role may ever hold (gen/scopes.RoleScopes). When set, a
	// caller's effective scopes are its token scopes intersected with its role's; an unknown role
	// has none. Nil uses the token scopes as they are.
	RoleScopes func(role string) (capability.ScopeSet, bool)

	// Verifier authenticates bearer tokens.
	Verifier authn.Verifier
	// ResourceMetadataURL is the RFC 9728 metadata URL named in every bearer challenge.
	ResourceMetadataURL string
	// ChallengeScope is the scope hint of 401 challenges (optional).
	ChallengeScope string
	// AllowedHosts and AllowedOrigins are the Host/Origin allowlist (see httpx.HostOriginGuard).
	AllowedHosts, AllowedOrigins []string

	// OnScopeDenied, when set, is told about every request refused with 403 insufficient_scope
	// before any handler runs (the server writes it to the audit log). The caller is on ctx.
	OnScopeDenied func(ctx context.Context, capabilityID, scope string)

	// RateLimit, when set, limits requests per authenticated caller (429 + Retry-After).
	RateLimit *httpx.RateLimiter

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

	// Logger receives server-side diagnostics (internal errors with their correlation id).
	Logger *slog.Logger
}
