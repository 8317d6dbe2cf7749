package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_checkout_register

// CheckoutRegister implements tool "neemias_checkout_register" (scope checkins:write).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) CheckoutRegister(ctx context.Context, in *capapi.CheckoutRegisterInput) (*capapi.CheckoutRegisterOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapCheckoutRegister, errs.ErrNotImplemented)
}
