package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability roster_children

// RosterChildren implements resource "neemias://roster/children" (scope roster:read).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) RosterChildren(ctx context.Context, in *capapi.RosterChildrenInput) (*capapi.RosterChildrenOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapRosterChildren, errs.ErrNotImplemented)
}
