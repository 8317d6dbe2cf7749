package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability roster_child

// RosterChild implements resource "neemias://roster/children/{id}" (scope children:read).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) RosterChild(ctx context.Context, in *capapi.RosterChildInput) (*capapi.RosterChildOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapRosterChild, errs.ErrNotImplemented)
}
