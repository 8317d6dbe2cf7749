package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// ordered is a JSON object that keeps insertion order, so the document is byte-stable.
type ordered struct {
	keys []string
	vals map[string]any
}

func obj(kv ...any) *ordered {
	o := &ordered{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *ordered) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	queryVars = regexp.MustCompile(`\{\?([^}]*)\}`)
	pathVars  = regexp.MustCompile(`\{([^?}]+)\}`)
)

// RESTPath maps a resource URI template onto an HTTP path and its query parameters:
// "neemias://attendance/summary{?from,to,class_id}" -> "/attendance/summary", [from to class_id].
func RESTPath(uri string) (path string, pathParams, queryParams []string) {
	_, rest, _ := strings.Cut(uri, "://")
	if m := queryVars.FindStringSubmatch(rest); m != nil {
		queryParams = strings.Split(m[1], ",")
		rest = queryVars.ReplaceAllString(rest, "")
	}
	for _, m := range pathVars.FindAllStringSubmatch(rest, -1) {
		pathParams = append(pathParams, m[1])
	}
	return "/" + rest, pathParams, queryParams
}

// ToolPath is the REST path of a tool.
func ToolPath(name string) string { return "/tools/" + name }

func stripSchema(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "$schema")
	return m, nil
}

// OpenAPI builds the OpenAPI 3.1 document of the same capabilities the MCP endpoint serves:
// GET for resources (URI variables become path and query parameters), POST for tools.
func OpenAPI(s *spec.Spec, specPath string, ins, outs map[string]json.RawMessage) ([]byte, error) {
	schemas := obj()
	paths := obj()
	scopes := obj()
	for _, sc := range s.Scopes {
		scopes.set(sc.Name, sc.Value.Description)
	}
	errorRef := obj("$ref", "#/components/responses/Error")
	addSchemas := func(goName, id string) error {
		in, err := stripSchema(ins[id])
		if err != nil {
			return fmt.Errorf("input schema of %q: %w", id, err)
		}
		out, err := stripSchema(outs[id])
		if err != nil {
			return fmt.Errorf("output schema of %q: %w", id, err)
		}
		schemas.set(goName+"Input", in)
		schemas.set(goName+"Output", out)
		return nil
	}
	okResponse := func(goName string) *ordered {
		return obj("200", obj("description", "The capability's output.",
			"content", obj("application/json", obj("schema", obj("$ref", "#/components/schemas/"+goName+"Output")))),
			"default", errorRef)
	}
	for _, e := range s.Resources {
		goName := spec.GoName(e.Name, "")
		if err := addSchemas(goName, e.Name); err != nil {
			return nil, err
		}
		p, pathParams, queryParams := RESTPath(e.Value.URI)
		var params []any
		for _, v := range pathParams {
			f, _ := e.Value.Input.Get(v)
			params = append(params, obj("name", v, "in", "path", "required", true, "description", strings.TrimSpace(f.Description), "schema", paramSchema(f)))
		}
		for _, v := range queryParams {
			f, _ := e.Value.Input.Get(v)
			params = append(params, obj("name", v, "in", "query", "required", f.Required, "description", strings.TrimSpace(f.Description), "schema", paramSchema(f)))
		}
		op := obj("operationId", spec.LowerGoName(e.Name, ""), "summary", e.Value.Title,
			"description", strings.TrimSpace(e.Value.Description),
			"security", []any{obj("oauth2", []string{e.Value.Scope})})
		if len(params) > 0 {
			op.set("parameters", params)
		}
		op.set("responses", okResponse(goName))
		paths.set(p, obj("get", op))
	}
	for _, e := range s.Tools {
		goName := spec.GoName(e.Name, s.Server.ToolPrefix)
		if err := addSchemas(goName, e.Name); err != nil {
			return nil, err
		}
		op := obj("operationId", spec.LowerGoName(e.Name, s.Server.ToolPrefix), "summary", e.Value.Title,
			"description", strings.TrimSpace(e.Value.Description),
			"security", []any{obj("oauth2", []string{e.Value.Scope})},
			"requestBody", obj("required", true, "content", obj("application/json", obj("schema", obj("$ref", "#/components/schemas/"+goName+"Input")))),
			"responses", okResponse(goName))
		paths.set(ToolPath(e.Name), obj("post", op))
	}
	schemas.set("Error", obj(
		"type", "object",
		"description", "An error. Messages never contain personal data; quote correlation_id when reporting a problem.",
		"required", []string{"code", "message"},
		"additionalProperties", false,
		"properties", obj(
			"code", obj("type", "string", "enum", []string{"invalid_input", "not_found", "unauthorized", "forbidden", "conflict", "not_implemented", "rate_limited", "too_large", "unavailable", "internal"}, "description", "Machine-readable error kind."),
			"message", obj("type", "string", "description", "What went wrong and what to do."),
			"field", obj("type", "string", "description", "The offending input field, for invalid_input."),
			"correlation_id", obj("type", "string", "description", "Id of the server log entry, for internal errors."),
		)))
	doc := obj(
		"openapi", "3.1.0",
		"info", obj("title", s.Server.Title+" REST API", "version", s.Server.Version,
			"description", "Code generated by capgen from "+specPath+". DO NOT EDIT. The REST view of the capabilities the MCP endpoint serves; same scopes, same row filters, same redaction."),
		"servers", []any{obj("url", "/api/v1")},
		"paths", paths,
		"components", obj(
			"schemas", schemas,
			"responses", obj("Error", obj("description", "Error", "content", obj("application/json", obj("schema", obj("$ref", "#/components/schemas/Error"))))),
			"securitySchemes", obj("oauth2", obj("type", "oauth2", "description", "OAuth 2.1 bearer token for this resource.",
				"flows", obj("authorizationCode", obj("authorizationUrl", "/authorize", "tokenUrl", "/token", "scopes", scopes)))),
		),
	)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshalling OpenAPI document: %w", err)
	}
	return append(b, '\n'), nil
}

func paramSchema(f spec.Field) *ordered {
	o := obj("type", f.Type)
	if f.Format != "" {
		o.set("format", f.Format)
	}
	return o
}
