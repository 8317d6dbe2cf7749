package upstream

import "github.com/neemias/neemias-mcp/internal/oauth/cimd"

var errForbidden = cimd.ErrForbiddenAddress
