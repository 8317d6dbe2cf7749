package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_child_enroll

// ChildEnroll implements tool "neemias_child_enroll" (scope children:write).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) ChildEnroll(ctx context.Context, in *capapi.ChildEnrollInput) (*capapi.ChildEnrollOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapChildEnroll, errs.ErrNotImplemented)
}
