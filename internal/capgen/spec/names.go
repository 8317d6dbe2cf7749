package spec

import "strings"

// initialisms are upper-cased whole in Go names (Go review convention: ClassID, not ClassId).
var initialisms = map[string]string{"id": "ID", "uri": "URI", "url": "URL", "uuid": "UUID", "ttl": "TTL", "ms": "MS", "api": "API", "json": "JSON", "sql": "SQL", "http": "HTTP"}

// GoName turns a snake_case spec id into an exported Go name, after stripping prefix:
// GoName("neemias_checkin_register", "neemias_") == "CheckinRegister",
// GoName("class_id", "") == "ClassID".
func GoName(id, prefix string) string {
	id = strings.TrimPrefix(id, prefix)
	var b strings.Builder
	for _, part := range strings.Split(id, "_") {
		if part == "" {
			continue
		}
		if up, ok := initialisms[part]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// LowerGoName is GoName with a lower-case first word (for operation ids): "rosterChild".
func LowerGoName(id, prefix string) string {
	n := GoName(id, prefix)
	for i, part := range strings.Split(strings.TrimPrefix(id, prefix), "_") {
		if i == 0 && part != "" {
			if up, ok := initialisms[part]; ok {
				return strings.ToLower(up) + n[len(up):]
			}
			return strings.ToLower(n[:1]) + n[1:]
		}
	}
	return n
}
