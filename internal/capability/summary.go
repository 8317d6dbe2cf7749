package capability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// Summaries: a capability may declare a one-sentence narrative for the model (the spec's
// summary:), a Go text/template over its output as it goes on the wire, by JSON name:
//
//	{{len .checkins}} check-ins on {{.date}} in {{distinct .checkins "class_id"}} classes
//
// It runs on the finalized JSON, after redaction, so it can never print what the caller's
// scopes leave out. The generator validates every template (fields, functions, no personal
// data); the runtime parses them again at start-up.

// SummaryFuncs are the functions a summary may call besides the builtin len.
var SummaryFuncs = template.FuncMap{"distinct": distinct}

// ParseSummary parses a summary template.
func ParseSummary(src string) (*template.Template, error) {
	return template.New("summary").Option("missingkey=zero").Funcs(SummaryFuncs).Parse(src)
}

// RenderSummary executes t over the output JSON (an object) and returns the sentence, trimmed
// and on one line.
func RenderSummary(t *template.Template, output []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(output))
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
