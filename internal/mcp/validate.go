package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// schema is a compiled generated schema plus the format checks jsonschema-go does not do
// (it treats "format" as an annotation).
type schema struct {
	resolved *jsonschema.Resolved
	formats  map[string]string // JSON pointer-ish path ("a", "g.p", "items[]") -> format
}

func compileSchema(raw json.RawMessage) (*schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving schema: %w", err)
	}
	sc := &schema{resolved: r, formats: map[string]string{}}
	collectFormats(&s, "", sc.formats)
	return sc, nil
}

func collectFormats(s *jsonschema.Schema, path string, out map[string]string) {
	if s == nil {
		return
	}
	if s.Format != "" && path != "" {
		out[path] = s.Format
	}
	for name, p := range s.Properties {
		collectFormats(p, joinPath(path, name), out)
	}
	if s.Items != nil {
		collectFormats(s.Items, path+"[]", out)
	}
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// validate checks instance against the schema and returns an agent-actionable reason that names
// the field and the rule but never quotes the value (which may be personal data).
func (s *schema) validate(instance any) (field, reason string, ok bool) {
	if err := s.resolved.Validate(instance); err != nil {
		field, reason = describeValidationError(err.Error())
		return field, reason, false
	}
	if field, reason := checkFormats(instance, "", s.formats); reason != "" {
		return field, reason, false
	}
	return "", "", true
}

func checkFormats(v any, path string, formats map[string]string) (string, string) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if f, r := checkFormats(child, joinPath(path, k), formats); r != "" {
				return f, r
			}
		}
	case []any:
		for _, child := range t {
			if f, r := checkFormats(child, path+"[]", formats); r != "" {
				return f, r
			}
		}
	case string:
		if format, ok := formats[path]; ok {
			if r := checkFormat(format, t); r != "" {
				return path, r
			}
		}
	}
	return "", ""
}

// checkFormat returns why s is not of format, or "".
func checkFormat(format, s string) string {
	switch format {
	case "uuid":
		if u, err := uuid.Parse(s); err != nil || len(s) != 36 || u.String() != strings.ToLower(s) {
			return "must be a UUID like 123e4567-e89b-12d3-a456-426614174000"
		}
	case "date":
		if _, err := capability.ParseDate(s); err != nil {
			return "must be a calendar date in the form YYYY-MM-DD"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "must be an RFC 3339 date-time like 2026-03-01T09:30:00-03:00"
		}
	}
	return ""
}

var (
	reProp    = regexp.MustCompile(`validating (/[^:]*): `)
	reWant    = regexp.MustCompile(`want "([^"]+)"`)
	reMissing = regexp.MustCompile(`missing properties: \[(.*)\]`)
	reExtra   = regexp.MustCompile(`unexpected additional properties \[(.*)\]`)
	reFewer   = regexp.MustCompile(`fewer than (\d+)`)
	reMore    = regexp.MustCompile(`more than (\d+)`)
	reEnum    = regexp.MustCompile(`any of: (\[.*\])`)
	rePattern = regexp.MustCompile(`regular expression "(.*)"$`)
)

// describeValidationError turns a jsonschema-go error (which quotes values) into a field path
// and a value-free reason.
func describeValidationError(msg string) (field, reason string) {
	if ms := reProp.FindAllStringSubmatch(msg, -1); len(ms) > 0 {
		field = pointerToPath(ms[len(ms)-1][1])
	}
	rest := msg
	if i := strings.LastIndex(msg, ": validating "); i >= 0 {
		rest = msg[i:]
	}
	switch {
	case reMissing.MatchString(rest):
		names := strings.ReplaceAll(reMissing.FindStringSubmatch(rest)[1], `"`, "")
		return field, "missing required field(s): " + strings.ReplaceAll(names, " ", ", ")
	case reExtra.MatchString(rest):
		names := strings.ReplaceAll(reExtra.FindStringSubmatch(rest)[1], `"`, "")
		return field, "unknown field(s) not accepted: " + truncateString(strings.ReplaceAll(names, " ", ", "), 120)
	case strings.Contains(rest, " type: "):
		if m := reWant.FindStringSubmatch(rest); m != nil {
			return field, "must be of type " + m[1]
		}
		return field, "has the wrong type"
	case strings.Contains(rest, "minLength:"):
		if m := reFewer.FindStringSubmatch(rest); m != nil {
			return field, "is too short: at least " + m[1] + " characters"
		}
	case strings.Contains(rest, "maxLength:"):
		if m := reMore.FindStringSubmatch(rest); m != nil {
			return field, "is too long: at most " + m[1] + " characters"
		}
	case strings.Contains(rest, "enum:"):
		if m := reEnum.FindStringSubmatch(rest); m != nil {
			return field, "must be one of " + m[1]
		}
	case strings.Contains(rest, "const:"):
		return field, "does not have the required value"
	case strings.Contains(rest, "pattern:"):
		if m := rePattern.FindStringSubmatch(rest); m != nil {
			return field, "does not match the pattern " + m[1]
		}
	case strings.Contains(rest, "minimum:"), strings.Contains(rest, "maximum:"),
		strings.Contains(rest, "exclusiveMinimum:"), strings.Contains(rest, "exclusiveMaximum:"):
		return field, "is out of the allowed range"
	case strings.Contains(rest, "minItems:"), strings.Contains(rest, "maxItems:"):
		return field, "has too few or too many items"
	}
	return field, "does not satisfy the input schema"
}

func pointerToPath(ptr string) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				out = append(out, parts[i+1])
				i++
			}
		case "items":
			if len(out) > 0 {
				out[len(out)-1] += "[]"
			}
		}
	}
	return strings.Join(out, ".")
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
