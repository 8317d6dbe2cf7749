package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_checkin_register

// CheckinRegister implements tool "neemias_checkin_register" (scope checkins:write).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) CheckinRegister(ctx context.Context, in *capapi.CheckinRegisterInput) (*capapi.CheckinRegisterOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapCheckinRegister, errs.ErrNotImplemented)
}
