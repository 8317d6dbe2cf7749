package server

import (
	"context"
	"encoding/json"
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

// readiness is GET /readyz: 200 when the database answers and, in external provider mode,
// the provider's keys are held (cached keys count: they keep serving while the provider is
// down); otherwise 503 with Retry-After and what is missing. /healthz stays the liveness
// check (the database only), so an unreachable provider never gets a replica restarted.
func readiness(st *store.Store, v *external.Verifier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		report := map[string]string{"database": "ok"}
		ready := true
		if err := st.Pool().Ping(ctx); err != nil {
			report["database"], ready = "unavailable", false
		}
		if v != nil {
			report["identity_provider"] = "ok"
			if err := v.Ready(ctx); err != nil {
				report["identity_provider"], ready = "unavailable: "+err.Error(), false
			}
		}
		report["status"] = "ready"
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ready {
			report["status"] = "unavailable"
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(report)
	})
}
