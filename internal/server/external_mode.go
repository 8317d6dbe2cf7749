package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/reqid"
	"github.com/neemias/neemias-mcp/internal/store"
)

// registerExternalMode mounts external provider mode's own endpoints: with MetadataProxy,
// /.well-known/oauth-authorization-server (and its /mcp path-inserted form) serves the
// provider's metadata with "none" added to token_endpoint_auth_methods_supported. Nothing in
// built-in mode, or with the proxy off.
func registerExternalMode(mux *http.ServeMux, x *ExternalAuth, v *external.Verifier, log *slog.Logger) {
	if x == nil || v == nil || !x.MetadataProxy {
		return
	}
	h := func(w http.ResponseWriter, r *http.Request) {
		body, err := v.AuthorizationServerMetadata(r.Context())
		if err != nil {
			log.WarnContext(r.Context(), "identity provider metadata unavailable for the metadata proxy", "error", err)
			setRetryAfter(w, err)
			http.Error(w, "the identity provider's metadata is unavailable; try again shortly", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(body)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", h)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/mcp", h)
}

// setRetryAfter sets Retry-After from an error that says when to retry (RetryAfter()).
func setRetryAfter(w http.ResponseWriter, err error) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ra.RetryAfter().Seconds()))))
	}
}

// auditMissingAudience records every token accepted without aud (external.Config's
// compensating check) in the audit log, as the caller it was accepted for.
func auditMissingAudience(st *store.Store) func(ctx context.Context, p principal.Principal) error {
	return func(ctx context.Context, p principal.Principal) error {
		return audit.Record(ctx, st, store.CallerFor(p), audit.Entry{
			Capability: "oauth_external", Action: "token.accepted_without_aud", Outcome: audit.Allowed,
			ClientID: p.ClientID, CorrelationID: reqid.From(ctx),
		})
	}
}
