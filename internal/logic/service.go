// Package logic is the hand-written business logic behind every capability: one file per
// capability, scaffolded once by capgen and owned by people from then on.
package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
)

// Service implements the generated Handler.
type Service struct{}

// The build breaks here when the spec gains a capability that has no method yet.
var _ capapi.Handler = (*Service)(nil)

// Complete answers completion/complete for completable inputs.
func (s *Service) Complete(ctx context.Context, capabilityID, variable, prefix string) ([]string, error) {
	return nil, nil
}
