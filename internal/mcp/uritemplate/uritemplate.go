// Package uritemplate matches resource URIs against the RFC 6570 templates of the capability
// spec, strictly. The go-sdk's matcher (yosida95/uritemplate) accepts "..", "%2F", empty values
// and decodes percent-escapes before handing the raw URI on; this one is what authorization,
// lookup and the handler all use, so they never disagree about which record a URI names.
//
// Supported template syntax is what the spec uses: literal text, simple expansions "{name}"
// (one path segment) and one trailing form-style query expansion "{?a,b,c}". Matching rules:
//   - the URI must equal the template's literal text byte for byte (no case folding of the
//     scheme, no trailing slash, no fragment);
//   - a "{name}" value is one or more RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~),
//     never "." or "..": no percent-encoding at all, so "%2F", "%2e%2e" and "%00" cannot sneak
//     in;
//   - the query, when the template has "{?…}", is "k=v" pairs joined by "&", each k declared in
//     the template and present at most once, each v non-empty and unreserved-only. A template
//     without a query expansion matches no URI with "?".
package uritemplate

import (
	"fmt"
	"regexp"
	"strings"
)

// Template is a compiled URI template.
type Template struct {
	raw string
	// literal is the template's text before its first expression: every URI it matches
	// starts with it, so most templates refuse a URI without running the regexp; a template
	// without path variables matches exactly that path.
	literal   string
	path      *regexp.Regexp
	pathVars  []string
	queryVars []string
	hasQuery  bool
}

var varName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

const unreserved = `[A-Za-z0-9._~-]+`

// Compile parses a template. It rejects operators other than the trailing "{?…}", nested or
// unbalanced braces, duplicate variable names and invalid variable names.
func Compile(tmpl string) (*Template, error) {
	t := &Template{raw: tmpl}
	t.literal, _, _ = strings.Cut(tmpl, "{")
	var re strings.Builder
	re.WriteString("^")
	seen := map[string]bool{}
	rest := tmpl
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if close := strings.IndexByte(rest, '}'); close >= 0 && (open < 0 || close < open) {
			return nil, fmt.Errorf("uri template %q: unbalanced '}'", tmpl)
		}
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		lit := rest[:open]
		if strings.ContainsAny(lit, "?#") {
			return nil, fmt.Errorf("uri template %q: literal query or fragment is not supported", tmpl)
		}
		re.WriteString(regexp.QuoteMeta(lit))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unbalanced '{'", tmpl)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		if strings.ContainsAny(expr, "{") {
			return nil, fmt.Errorf("uri template %q: nested '{'", tmpl)
		}
		if strings.HasPrefix(expr, "?") {
			if rest != "" {
				return nil, fmt.Errorf("uri template %q: query expansion must come last", tmpl)
			}
			for _, n := range strings.Split(expr[1:], ",") {
				if !varName.MatchString(n) || seen[n] {
					return nil, fmt.Errorf("uri template %q: bad or duplicate variable %q", tmpl, n)
				}
				seen[n] = true
				t.queryVars = append(t.queryVars, n)
			}
			t.hasQuery = true
			break
		}
		if !varName.MatchString(expr) || seen[expr] {
			return nil, fmt.Errorf("uri template %q: unsupported expression or duplicate variable {%s}", tmpl, expr)
		}
		seen[expr] = true
		t.pathVars = append(t.pathVars, expr)
		re.WriteString("(" + unreserved + ")")
	}
	re.WriteString("$")
	p, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %w", tmpl, err)
	}
	t.path = p
	return t, nil
}

// MustCompile is Compile for templates known to be valid; it panics otherwise.
func MustCompile(tmpl string) *Template {
	t, err := Compile(tmpl)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the template text.
func (t *Template) String() string { return t.raw }

// Variables returns the names of all variables, path first, in template order.
func (t *Template) Variables() []string {
	return append(append([]string(nil), t.pathVars...), t.queryVars...)
}

// Match reports whether uri is an expansion of t under the strict rules of the package doc, and
// returns the variable values. Query variables that are absent are absent from the map.
func (t *Template) Match(uri string) (map[string]string, bool) {
	if strings.ContainsAny(uri, "#%") {
		return nil, false
	}
	path, query, hasQ := strings.Cut(uri, "?")
	if hasQ && (!t.hasQuery || query == "") {
		return nil, false
	}
	if !strings.HasPrefix(path, t.literal) || (len(t.pathVars) == 0 && path != t.literal) {
		return nil, false
	}
	m := t.path.FindStringSubmatch(path)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.pathVars)+len(t.queryVars))
	for i, name := range t.pathVars {
		v := m[i+1]
		if v == "." || v == ".." {
			return nil, false
		}
		vars[name] = v
	}
	if hasQ {
		for _, pair := range strings.Split(query, "&") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || v == "" || v == "." || v == ".." || !isUnreserved(v) || !t.isQueryVar(k) {
				return nil, false
			}
			if _, dup := vars[k]; dup {
				return nil, false
			}
			vars[k] = v
		}
	}
	return vars, true
}

func (t *Template) isQueryVar(name string) bool {
	for _, q := range t.queryVars {
		if q == name {
			return true
		}
	}
	return false
}

func isUnreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return s != ""
}
