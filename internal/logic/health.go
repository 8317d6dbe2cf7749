package logic

import (
	"strings"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/pii"
)

// healthText is an allergy or medical note as stored: trimmed, nil when empty, refused when it
// holds a phone or a document number (the text is shown to volunteers at the door; a
// guardian's phone has a field of its own). The reason names the field, never the text.
func healthText(field string, v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	t := strings.Join(strings.Fields(*v), " ")
	if t == "" {
		return nil, nil
	}
	if pii.HoldsNumbers(t) {
		return nil, &errs.Invalid{Field: field, Reason: "looks like it holds a phone or document number (CPF, RG); write only what the class must know of the child's health"}
	}
	return &t, nil
}
