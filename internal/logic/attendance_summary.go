package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability attendance_summary

// AttendanceSummary implements resource "neemias://attendance/summary{?from,to,class_id}" (scope attendance:read).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) AttendanceSummary(ctx context.Context, in *capapi.AttendanceSummaryInput) (*capapi.AttendanceSummaryOutput, error) {
	return nil, fmt.Errorf("%s: %w", capapi.CapAttendanceSummary, errs.ErrNotImplemented)
}
