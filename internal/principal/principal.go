// Package principal carries the verified caller of a request: who they are, which church they
// act for, their role and the scopes their token grants. The OAuth layer puts it on the request
// context; capability logic and the data layer read it (row filters, row-level security, audit).
package principal

import (
	"context"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// Principal is a verified caller.
type Principal struct {
	UserID   uuid.UUID
	ChurchID uuid.UUID
	Role     string
	Scopes   capability.ScopeSet
	// ClientID is the OAuth client the caller acts through, for the audit log.
	ClientID string
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the caller on ctx; ok is false when the request was not authenticated.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
