// Package specschema produces the JSON Schema of the capability spec format,
// spec/capabilities.schema.json, from the Go model in internal/capgen/spec (its types, yaml
// tags and jsonschema tags), so that editors validate spec/capabilities.yaml as the loader
// will. The package is hand-written and builds the schema only: capgen's emitter encodes it
// with the one JSON encoding of every generated JSON file, and capgen's tests fail when the
// committed file is stale.
//
// The schema checks what JSON Schema can say locally: keys, types, enums, required keys,
// name patterns. Cross-references (a scope a role grants must be declared, URI template
// variables must be inputs, …) are the loader's job, and its diagnostics are the authority.
package specschema
