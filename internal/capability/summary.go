package capability

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	gojson "github.com/goccy/go-json"
)

// Summaries: a capability may declare a one-sentence narrative for the model (the spec's
// summary:), a Go text/template over its output as it goes on the wire, by JSON name:
//
//	{{plural (len .checkins) "check-in" "check-ins"}} on {{.date}} in {{plural (distinct .checkins "class_id") "class" "classes"}}
//
// It runs on the finalized JSON, after redaction, so it can never print what the caller's
// scopes leave out. The generator validates every template (fields, functions, no personal
// data); the runtime parses them again at start-up.

// SummaryFuncs are the functions a summary may call besides the builtin len.
var SummaryFuncs = template.FuncMap{"distinct": distinct, "plural": plural}

// ParseSummary parses a summary template.
func ParseSummary(src string) (*template.Template, error) {
	return template.New("summary").Option("missingkey=zero").Funcs(SummaryFuncs).Parse(src)
}

// RenderSummary executes t over the output JSON (an object) and returns the sentence, trimmed
// and on one line.
func RenderSummary(t *template.Template, output []byte) (string, error) {
	// goccy/go-json, the pipeline's encoder's library: a third of encoding/json's time and
	// allocations for the busiest day's 212 check-ins (BenchmarkRenderSummary), the same values.
	dec := gojson.NewDecoder(bytes.NewReader(output))
	dec.UseNumber() // 212 prints as 212, never 2.12e+02
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("summary: decoding output: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return "", fmt.Errorf("summary: %w", err)
	}
	return strings.Join(strings.Fields(buf.String()), " "), nil
}

// distinct counts the distinct values of member field among the objects of list.
func distinct(list any, field string) (int, error) {
	items, ok := list.([]any)
	if !ok {
		if list == nil {
			return 0, nil
		}
		return 0, fmt.Errorf("distinct: %T is not a list", list)
	}
	seen := map[string]bool{}
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("distinct: an element is %T, not an object", it)
		}
		if val, ok := obj[field]; ok && val != nil {
			seen[fmt.Sprint(val)] = true
		}
	}
	return len(seen), nil
}

// plural prints a count with the noun that agrees with it: {{plural 1 "class" "classes"}} is
// "1 class", and 0 or 2 give "0 classes", "2 classes" (English, as summaries are). n is an int
// (len, distinct) or an output number (a json.Number, since outputs decode with UseNumber); a
// missing field counts as 0.
func plural(n any, one, many string) (string, error) {
	var s string
	switch v := n.(type) {
	case nil:
		s = "0"
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case gojson.Number: // = encoding/json.Number
		s = v.String()
	default:
		return "", fmt.Errorf("plural: %T is not a number", n)
	}
	if s == "1" {
		return s + " " + one, nil
	}
	return s + " " + many, nil
}
