// Package capgen is the generator: spec/capabilities.yaml in, every file capgen owns out, in
// one pure step. cmd/capgen is its thin CLI.
//
//	load and validate (spec) → NewModel → Emitters → []File in memory → Write | Diff
//
// The [Model] is complete: the server's identity, scopes, roles, row filters, capabilities with
// their Go names and types, REST operations, audit facts, upstream tools and views. Emitters
// read only the model (TestTemplatesReadOnlyTheModel, TestModelHoldsNoRawSpec), and each
// declares its own files; one style per kind of file: Go from text/template through gofmt,
// SQL and Markdown from text/template, JSON through one encoder (the spec format's own schema,
// reflected by specschema, included). The JSON Schemas and the OpenAPI document are built
// here too, from the model, so `capgen check` diffs all of it; a test reflects the generated
// Go types with invopop/jsonschema and proves they agree with the schemas. Runtime behaviour
// lives in internal/capability; generated packages hold data.
//
// Hand-written; nothing in it is generated. Scaffold (stubs written once, never overwritten)
// and Inspect (what a role can reach) share the model.
package capgen
