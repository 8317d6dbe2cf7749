package oauth

import (
	"context"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/reqid"
)

// The authorization server's audit actions (capability "oauth"): ids only, never an email,
// a password, a code or a token.
const (
	auditGrantCreated    = "grant.created"
	auditCodeReplayed    = "code.replayed"
	auditTokenRefreshed  = "token.refreshed"
	auditRefreshReused   = "refresh.reused"
	auditRefreshDisabled = "refresh.user_disabled"
	auditGrantRevoked    = "grant.revoked"
	auditConsentApproved = "consent.approved"
	auditConsentDenied   = "consent.denied"
	auditLoginFailed     = "login.failed"
)

// auditEvent appends one authorization-server event within q's transaction (the owner's):
// about church and user when known (uuid.Nil otherwise), through client, on targets (grant
// ids).
func auditEvent(ctx context.Context, q *db.Queries, church, user uuid.UUID, client, action string, outcome audit.Outcome, targets ...uuid.UUID) error {
	return audit.InsertFor(ctx, q, church, user, audit.Entry{
		Capability: audit.OAuthCapability, Action: action, Outcome: outcome, ClientID: client,
		Targets: targets, CorrelationID: reqid.From(ctx),
	})
}

// auditBestEffort is auditEvent outside a transaction that must fail with it: a failure is
// logged, the answer goes on (the login page, revocation's always-200).
func (a *AS) auditBestEffort(ctx context.Context, church, user uuid.UUID, client, action string, outcome audit.Outcome, targets ...uuid.UUID) {
	if err := auditEvent(ctx, a.q, church, user, client, action, outcome, targets...); err != nil {
		a.log.ErrorContext(ctx, "audit: an authorization-server event was not recorded", "action", action, "error", err)
	}
}
