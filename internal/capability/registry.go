package capability

import (
	"context"
	"fmt"
	"slices"
)

// ScopeInfo describes a scope for consent pages and docs.
type ScopeInfo struct {
	Name        string
	Description string
	En          string // consent-page wording in English
	Pt          string // consent-page wording in Brazilian Portuguese
	Sensitive   bool   // reaches personal data; the consent page warns
	// WarningPt and WarningEn are the consent page's LGPD warning for a sensitive scope
	// (the spec's warning:, required exactly when Sensitive is set).
	WarningPt, WarningEn string
}

// RoleScopes is one role of the scope matrix and the scopes it may hold.
type RoleScopes struct {
	Role   string
	Scopes []string
}

// ScopeMatrix is the spec's scopes and the scopes each role may hold, as immutable data (the
// scope each capability needs is its [Catalog] entry's). Every lookup fails closed: an unknown
// role or scope gets nothing.
type ScopeMatrix struct {
	scopes []ScopeInfo
	roles  []RoleScopes
}

// NewScopeMatrix builds a matrix from the spec's scopes and the roles in spec order (all
// copied).
func NewScopeMatrix(scopes []ScopeInfo, roles []RoleScopes) ScopeMatrix {
	m := ScopeMatrix{scopes: slices.Clone(scopes)}
	for _, r := range roles {
		m.roles = append(m.roles, RoleScopes{Role: r.Role, Scopes: slices.Clone(r.Scopes)})
	}
	return m
}

// RoleScopes returns the scopes role may hold; ok is false for an unknown role.
func (m ScopeMatrix) RoleScopes(role string) (ScopeSet, bool) {
	for _, r := range m.roles {
		if r.Role == role {
			return NewScopeSet(r.Scopes...), true
		}
	}
	return ScopeSet{}, false
}

// Grant returns requested ∩ the role's scopes: what a token for role may carry. An unknown
// role gets nothing.
func (m ScopeMatrix) Grant(role string, requested ScopeSet) ScopeSet {
	allowed, ok := m.RoleScopes(role)
	if !ok {
		return ScopeSet{}
	}
	var out []string
	for _, s := range requested.List() {
		if allowed.Has(s) {
			out = append(out, s)
		}
	}
	return NewScopeSet(out...)
}

// Roles returns the role names in spec order.
func (m ScopeMatrix) Roles() []string {
	out := make([]string, len(m.roles))
	for i, r := range m.roles {
		out[i] = r.Role
	}
	return out
}

// IsRole reports whether role is one of [ScopeMatrix.Roles].
func (m ScopeMatrix) IsRole(role string) bool {
	_, ok := m.RoleScopes(role)
	return ok
}

// All returns every scope in spec order.
func (m ScopeMatrix) All() []ScopeInfo { return slices.Clone(m.scopes) }

// Describe returns the description of scope name; ok is false for an unknown scope.
func (m ScopeMatrix) Describe(name string) (ScopeInfo, bool) {
	for _, i := range m.scopes {
		if i.Name == name {
			return i, true
		}
	}
	return ScopeInfo{}, false
}

// Finalizer is implemented by every generated output type: it removes the fields granted does
// not cover and turns required nil lists into empty ones.
type Finalizer interface{ Finalize(ScopeSet) }

// Call runs a typed handler on decoded input and finalizes its output for granted: the one
// place a handler's result becomes what the caller may receive. A handler returning neither
// output nor error is a bug, reported as an error.
func Call[I any, O any, PO interface {
	*O
	Finalizer
}](ctx context.Context, id string, in *I, fn func(context.Context, *I) (PO, error), granted ScopeSet) (any, error) {
	out, err := fn(ctx, in)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("capability %q: handler returned neither output nor error", id)
	}
	out.Finalize(granted)
	return out, nil
}
