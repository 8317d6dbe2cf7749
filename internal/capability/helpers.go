package capability

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// Bool returns a pointer to b; generated registries use it for annotation hints.
func Bool(b bool) *bool { return &b }

// Clone returns a deep copy of c, so callers of the generated registry can never mutate it.
func Clone(c Capability) Capability {
	c.RowFilters = slices.Clone(c.RowFilters)
	c.Inputs = slices.Clone(c.Inputs)
	c.InputPII = slices.Clone(c.InputPII)
	c.OutputPII = slices.Clone(c.OutputPII)
	c.Audit.IDInputs = slices.Clone(c.Audit.IDInputs)
	clonePtr := func(p *bool) *bool {
		if p == nil {
			return nil
		}
		return Bool(*p)
	}
	c.Annotations = Annotations{
		ReadOnly: clonePtr(c.Annotations.ReadOnly), Destructive: clonePtr(c.Annotations.Destructive),
		Idempotent: clonePtr(c.Annotations.Idempotent), OpenWorld: clonePtr(c.Annotations.OpenWorld),
	}
	return c
}

// Redacted is what generated LogValue and String methods show instead of a PII field.
func Redacted(category PIICategory) slog.Value {
	return slog.StringValue("[redacted " + string(category) + "]")
}

// LogString renders a slog value the way generated String methods print a type: PII is
// already replaced by the LogValue it comes from, so this is safe for fmt and error messages.
func LogString(v slog.Value) string {
	v = v.Resolve()
	if v.Kind() != slog.KindGroup {
		return v.String()
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range v.Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", a.Key, LogString(a.Value))
	}
	b.WriteByte('}')
	return b.String()
}
