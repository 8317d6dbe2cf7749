package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability checkins_by_date

// CheckinsByDate implements resource "neemias://checkins/{date}" (scope checkins:read).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) CheckinsByDate(ctx context.Context, in *capapi.CheckinsByDateInput) (*capapi.CheckinsByDateOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapCheckinsByDate, errs.ErrNotImplemented)
}
