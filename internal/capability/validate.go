package capability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// Validator checks a capability input against its generated JSON Schema.
//
// It is hand-written on purpose: general validators (google/jsonschema-go, used by the SDK)
// quote the offending value in their messages ("minLength: \"Ana\" contains 3 code points") and
// report schema paths, not field names. Inputs carry children's names and guardians' phones, so
// our messages name the field and the rule and never the value. It understands exactly the
// subset of 2020-12 that the generator emits: type, properties, required,
// additionalProperties:false, items, enum, minLength, maxLength, pattern, minimum, maximum and
// format (uuid, date, date-time, email, uri), which it asserts rather than merely annotates.
type Validator struct{ root *schemaNode }

type schemaNode struct {
	Type                 string                 `json:"type"`
	Format               string                 `json:"format"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Enum                 []any                  `json:"enum"`
	MinLength            *int                   `json:"minLength"`
	MaxLength            *int                   `json:"maxLength"`
	Pattern              string                 `json:"pattern"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	PII                  string                 `json:"x-pii"`
	pattern              *regexp.Regexp
}

// NewValidator compiles a generated schema.
func NewValidator(schema []byte) (*Validator, error) {
	var root schemaNode
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("compiling input schema: %w", err)
	}
	if err := root.compile("(root)"); err != nil {
		return nil, err
	}
	if root.Type != "object" {
		return nil, fmt.Errorf("compiling input schema: root type is %q, want object", root.Type)
	}
	return &Validator{root: &root}, nil
}

func (n *schemaNode) compile(path string) error {
	if n.Pattern != "" {
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			return fmt.Errorf("compiling input schema: %s: pattern: %w", path, err)
		}
		n.pattern = re
	}
	for name, p := range n.Properties {
		if err := p.compile(path + "." + name); err != nil {
			return err
		}
	}
	if n.Items != nil {
		return n.Items.compile(path + "[]")
	}
	return nil
}

// Validate checks args (a JSON object; empty or null means {}) and returns an *errs.Invalid
// naming the first offending field, or nil.
func (v *Validator) Validate(args json.RawMessage) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		return &errs.Invalid{Reason: "arguments are not valid JSON"}
	}
	if dec.More() {
		return &errs.Invalid{Reason: "arguments must be a single JSON object"}
	}
	return v.root.check("", inst)
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func invalid(field, format string, args ...any) error {
	if field == "" {
		field = "(arguments)"
	}
	return &errs.Invalid{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (n *schemaNode) check(path string, inst any) error {
	got := jsonType(inst)
	want := n.Type
	if want != "" && got != want && !(want == "number" && got == "integer") {
		if path == "" && want == "object" {
			return invalid("", "arguments must be a JSON object, got %s", got)
		}
		return invalid(path, "must be %s, got %s", article(want), got)
	}
	switch x := inst.(type) {
	case map[string]any:
		for _, r := range n.Required {
			if _, ok := x[r]; !ok {
				return invalid(join(path, r), "is required")
			}
		}
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			p, ok := n.Properties[k]
			if !ok {
				if n.AdditionalProperties != nil && !*n.AdditionalProperties {
					known := make([]string, 0, len(n.Properties))
					for name := range n.Properties {
						known = append(known, name)
					}
					slices.Sort(known)
					if len(known) == 0 {
						return invalid(join(path, k), "is not a known field; this takes no arguments")
					}
					return invalid(join(path, k), "is not a known field; known fields: %s", strings.Join(known, ", "))
				}
				continue
			}
			if err := p.check(join(path, k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		if n.Items != nil {
			for i, item := range x {
				if err := n.Items.check(fmt.Sprintf("%s[%d]", path, i), item); err != nil {
					return err
				}
			}
		}
	case string:
		return n.checkString(path, x)
	case json.Number:
		f, _ := x.Float64()
		if n.Minimum != nil && f < *n.Minimum {
			return invalid(path, "must be at least %v", *n.Minimum)
		}
		if n.Maximum != nil && f > *n.Maximum {
			return invalid(path, "must be at most %v", *n.Maximum)
		}
	}
	return nil
}

func (n *schemaNode) checkString(path, s string) error {
	// PostgreSQL text cannot hold NUL, and control characters have no business in names or
	// codes: refuse them here with a clean message instead of a driver error later.
	if strings.ContainsRune(s, 0) {
		return invalid(path, "must not contain NUL characters")
	}
	if !utf8.ValidString(s) {
		return invalid(path, "must be valid UTF-8")
	}
	if len(n.Enum) > 0 {
		allowed := make([]string, 0, len(n.Enum))
		for _, e := range n.Enum {
			if e == s {
				return nil
			}
			allowed = append(allowed, fmt.Sprint(e))
		}
		return invalid(path, "must be one of: %s", strings.Join(allowed, ", "))
	}
	l := utf8.RuneCountInString(s)
	if n.MinLength != nil && l < *n.MinLength {
		return invalid(path, "must be at least %d characters long", *n.MinLength)
	}
	if n.MaxLength != nil && l > *n.MaxLength {
		return invalid(path, "must be at most %d characters long", *n.MaxLength)
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return invalid(path, "has the wrong form (must match %s)", n.Pattern)
	}
	if err := checkFormat(n.Format, s); err != nil {
		return invalid(path, "%s", err.Error())
	}
	return nil
}

func checkFormat(format, s string) error {
	var ok bool
	var want string
	switch format {
	case "":
		return nil
	case "uuid":
		_, err := uuid.Parse(s)
		ok, want = err == nil && len(s) == 36, "a UUID such as 7c9e6679-7425-40de-944b-e07fc1f90ae7"
	case "date":
		_, err := ParseDate(s)
		ok, want = err == nil, "a date in the form YYYY-MM-DD"
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok, want = err == nil, "an RFC 3339 date-time such as 2026-06-07T09:30:00-03:00"
	case "email":
		a, err := mail.ParseAddress(s)
		ok, want = err == nil && a.Address == s, "an e-mail address"
	case "uri":
		u, err := url.Parse(s)
		ok, want = err == nil && u.Scheme != "", "an absolute URI"
	default:
		return nil
	}
	if !ok {
		return fmt.Errorf("must be %s", want)
	}
	return nil
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	}
	return "a " + t
}

// Decode validates args against v's schema, then decodes them strictly into dst (a pointer to
// the generated input type). Every failure a caller can fix is an *errs.Invalid.
func (v *Validator) Decode(args json.RawMessage, dst any) error {
	if err := v.Validate(args); err != nil {
		return err
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		// The schema accepted it, so this is a type the schema cannot express (out of int64
		// range, say). Name the field, never the value.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(te.Field, "has an unsupported value")
		}
		return &errs.Invalid{Reason: "arguments could not be decoded"}
	}
	return nil
}
