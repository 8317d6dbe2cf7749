package logic

import (
	"testing"

	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/errs/errstest"
)

// TestAuditClassifiesEveryKind: the audit log is one more consumer of errs.KindOf, like the
// MCP and REST tables (TestEveryKindMapsOnMCP, TestEveryKindMapsOnREST): every kind has its
// action suffix and outcome, and a kind added to errs without an answer here fails.
func TestAuditClassifiesEveryKind(t *testing.T) {
	wants := map[errs.Kind]struct {
		action  string
		outcome audit.Outcome
	}{
		errs.KindInternal:        {"read.failed", audit.Error},
		errs.KindInvalid:         {"read.invalid", audit.Error},
		errs.KindNotFound:        {"read.not_found", audit.Denied},
		errs.KindUnauthenticated: {"read.unauthenticated", audit.Denied},
		errs.KindForbidden:       {"read.forbidden", audit.Denied},
		errs.KindConflict:        {"read.conflict", audit.Error},
		errs.KindNotImplemented:  {"read.failed", audit.Error},
		errs.KindUnavailable:     {"read.failed", audit.Error},
	}
	for _, k := range errs.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			w, ok := wants[k]
			if !ok {
				t.Fatalf("kind %v has no expected audit action: add it", k)
			}
			action, outcome := classify("read", errstest.Sample(k))
			if action != w.action || outcome != w.outcome {
				t.Errorf("classify = %q %q, want %q %q", action, outcome, w.action, w.outcome)
			}
		})
	}
	if action, outcome := classify("read", nil); action != "read" || outcome != audit.Allowed {
		t.Errorf("classify(nil) = %q %q, want read allowed", action, outcome)
	}
}
