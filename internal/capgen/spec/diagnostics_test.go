package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// brokenCases pins, for each spec under testdata/broken/, every diagnostic Load prints, in
// full: `FILE:LINE:COL: what is wrong; what to do`. Each file is testdata/valid.yaml with one
// thing wrong, named by the file and described on its first line; a file yields more than one
// message only when one mistake really breaks several rules (a role without scopes leaves
// every capability unreachable).
//
// PII rules are declared inline on the field they protect (`pii: {category, visible_with}`),
// so "a PII rule on an unknown field" cannot be written; the cases closest to it are a rule on
// a field it cannot apply to (pii_on_array), a rule naming an unknown category or scope, a
// visible_with on an input, and a required field that can be redacted. The reduced form
// (otherwise) and the handoff each get a case per rule they can break: on an input, an
// unknown value, otherwise without visible_with or on a non-string, a handoff of non-secret
// data, of a required field or of a nested one.
var brokenCases = []struct {
	name string // testdata/broken/NAME.yaml
	want []string
}{
	{"upstream_stdio_command", []string{
		`testdata/broken/upstream_stdio_command.yaml:74:5: command in upstreams.docs: stdio upstream servers are not supported (Neemias calls upstreams over Streamable HTTP only); remove it; run the server behind Streamable HTTP and give its URL at runtime (--upstream id=URL)`,
	}},
	{"upstream_tools_all", []string{
		`testdata/broken/upstream_tools_all.yaml:75:12: upstreams.docs.tools is "all": an upstream's tools are allowlisted one by one, never all; list each tool by its upstream name as a mapping, for example tools: {echo: {title: …, description: …, scope: …}}`,
	}},
	{"upstream_tools_empty", []string{
		`testdata/broken/upstream_tools_empty.yaml:75:12: upstreams.docs.tools is an empty list: the upstream would expose no tool; list each tool by its upstream name as a mapping, for example tools: {echo: {title: …, description: …, scope: …}}, or remove the upstream`,
	}},
	{"upstream_unknown_scope", []string{
		`testdata/broken/upstream_unknown_scope.yaml:79:16: upstream tool "docs.echo": unknown scope "docs:read" (did you mean "things:read"?); declare it under scopes or fix the name`,
	}},
	{"upstream_duplicate_id", []string{
		`testdata/broken/upstream_duplicate_id.yaml:80:3: duplicate name "docs" in upstreams (first defined at line 71); rename or remove one of them`,
	}},
	{"summary_pii", []string{
		`testdata/broken/summary_pii.yaml:55:34: capability "thing": summary: field "owner" is personal data (guardian_name); summaries never name personal data; leave it out`,
	}},
	{"summary_unknown_field", []string{
		`testdata/broken/summary_unknown_field.yaml:70:25: capability "demo_thing_rename": summary: the output has no field "idd" (did you mean "id"?); name an output field by its JSON name`,
	}},
	{"summary_function", []string{
		`testdata/broken/summary_function.yaml:55:23: capability "thing": summary: function "printf" is not allowed; use len, distinct and plural`,
	}},
	{"summary_optional", []string{
		`testdata/broken/summary_optional.yaml:55:39: capability "thing": summary: field "tags" is optional; print it inside {{if .tags}}…{{end}}`,
	}},
	{"view_unknown_capability", []string{
		`testdata/broken/view_unknown_capability.yaml:76:20: view "thing_view": capability "thnig" is not declared (did you mean "thing"?); name a resource id or a tool name`,
	}},
	{"view_bad_uri", []string{
		`testdata/broken/view_bad_uri.yaml:72:10: view "thing_view": uri "https://demo.example/thing" is not a ui:// URI; write ui:// then a lower-case path, such as ui://neemias/attendance-chart`,
	}},
	{"view_bad_file", []string{
		`testdata/broken/view_bad_file.yaml:75:11: view "thing_view": file "web/thing.htm" is not internal/views/<name>.html; put the document in internal/views/, named in lower-case kebab-case such as internal/views/attendance-chart.html`,
	}},
	{"view_bad_visibility", []string{
		`testdata/broken/view_bad_visibility.yaml:77:25: view "thing_view": visibility "ap" is not model or app (did you mean "app"?); use model or app`,
	}},
	{"view_app_only_visibility", []string{
		`testdata/broken/view_app_only_visibility.yaml:77:17: view "thing_view": visibility [app] would hide its linked capabilities from the model, which the server cannot honour: the view is shown for their results, and clients without MCP Apps list them as tools; keep model (visibility: [model, app], the default, or [model] to keep the view from calling them); declare the view's own actions under app_tools, which are app-only`,
	}},
	{"view_visibility_twice", []string{
		`testdata/broken/view_visibility_twice.yaml:77:30: view "thing_view": visibility lists "model" twice; list it once`,
	}},
	{"view_app_tool_unknown_tool", []string{
		`testdata/broken/view_app_tool_unknown_tool.yaml:79:15: view "thing_view": app tool "demo_thing_view_rename" runs "demo_thing_renam", which is not a declared tool (did you mean "demo_thing_rename"?); name a tool declared under tools: (the app tool runs it, under the same scope and rules)`,
	}},
	{"view_app_tool_name_taken", []string{
		`testdata/broken/view_app_tool_name_taken.yaml:78:7: view "thing_view": app tool "demo_thing_rename" has the name of tool "demo_thing_rename"; give the app tool a name of its own`,
	}},
	{"unknown_key_typo", []string{
		`testdata/broken/unknown_key_typo.yaml:31:5: unknown key "titel" in resources.thing (did you mean "title"?); rename it to title or remove it`,
	}},
	{"unknown_key", []string{
		`testdata/broken/unknown_key.yaml:10:3: unknown key "colour" in server; remove it or use one of: name, title, description, version, website, tool_prefix`,
	}},
	{"unknown_top_level_key", []string{
		`testdata/broken/unknown_top_level_key.yaml:55:1: unknown key "tool" in the spec (did you mean "tools"?); rename it to tools or remove it`,
	}},
	{"duplicate_capability", []string{
		`testdata/broken/duplicate_capability.yaml:55:3: duplicate name "thing" in resources (first defined at line 29); rename or remove one of them`,
	}},
	{"duplicate_scope", []string{
		`testdata/broken/duplicate_scope.yaml:19:3: duplicate name "things:read" in scopes (first defined at line 11); rename or remove one of them`,
	}},
	{"duplicate_key", []string{
		`testdata/broken/duplicate_key.yaml:33:5: duplicate key "description" in resources.thing (first at line 32); remove one of them`,
	}},
	{"duplicate_go_name", []string{
		`testdata/broken/duplicate_go_name.yaml:56:3: tool "demo_thing" has the Go name Thing, as resource "thing" does; rename one of them`,
	}},
	{"tool_name_space", []string{
		`testdata/broken/tool_name_space.yaml:56:13: tool name "demo_thing rename" has the character ' ', which MCP does not allow; use only the characters A-Z a-z 0-9 _ - .`,
	}},
	{"tool_name_too_long", []string{
		`testdata/broken/tool_name_too_long.yaml:56:3: tool name "demo_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" is 129 characters long (MCP allows at most 128); shorten it`,
	}},
	{"tool_name_not_snake_case", []string{
		`testdata/broken/tool_name_not_snake_case.yaml:56:3: tool name "demo_thingRename" is not snake_case; use lower-case snake_case such as neemias_checkin_register`,
	}},
	{"tool_name_prefix", []string{
		`testdata/broken/tool_name_prefix.yaml:56:3: tool name "thing_rename" lacks the prefix "demo_"; rename it to demo_thing_rename`,
	}},
	{"uri_template_unclosed", []string{
		`testdata/broken/uri_template_unclosed.yaml:30:27: resource "thing": invalid URI template "demo://things/{id": incomplete expression; fix the RFC 6570 template (variables are {name}, {?a,b} or {/name})`,
	}},
	{"uri_template_bad_variable", []string{
		`testdata/broken/uri_template_bad_variable.yaml:30:31: resource "thing": invalid URI template "demo://things/{thing id}": unacceptable variable name; fix the RFC 6570 template (variables are {name}, {?a,b} or {/name})`,
	}},
	{"uri_template_no_scheme", []string{
		`testdata/broken/uri_template_no_scheme.yaml:30:10: resource "thing": URI "things/{id}" has no scheme; start it with a scheme such as neemias://`,
	}},
	{"uri_variable_not_input", []string{
		`testdata/broken/uri_variable_not_input.yaml:30:40: resource "thing": template variable "rev" is not an input; declare input.rev or remove rev from the template`,
	}},
	{"input_not_uri_variable", []string{
		`testdata/broken/input_not_uri_variable.yaml:38:7: resource "thing": input "rev" is not a variable of the URI template; add {rev} (or {?rev}) to the uri or remove the input`,
	}},
	{"undeclared_scope", []string{
		`testdata/broken/undeclared_scope.yaml:33:12: resource "thing": unknown scope "things:raed" (did you mean "things:read"?); declare it under scopes or fix the name`,
	}},
	{"role_unknown_scope", []string{
		`testdata/broken/role_unknown_scope.yaml:27:41: role "ADMIN" grants unknown scope "thing:delete" (did you mean "things:write"?); declare it under scopes or fix the name`,
	}},
	{"unreachable_capability", []string{
		`testdata/broken/unreachable_capability.yaml:59:12: tool "demo_thing_rename" is unreachable: no role has scope "things:write"; grant "things:write" to a role`,
	}},
	{"pii_on_scalar_items", []string{
		`testdata/broken/pii_on_scalar_items.yaml:48:31: pii rule on the items of the list of strings "tags" (pii rules apply to fields); make the items objects (items: {type: object, fields: {value: {type: …, pii: …}}}) and put the rule on their field`,
	}},
	{"pii_on_array", []string{
		`testdata/broken/pii_on_array.yaml:49:9: pii rule on array field "tags" (pii rules apply to scalar fields); make the items objects and put the rule on their field`,
	}},
	{"pii_unknown_category", []string{
		`testdata/broken/pii_unknown_category.yaml:44:25: pii rule of field "owner" has unknown category "guardian_nmae" (did you mean "guardian_name"?); use one of child_name, birth_date, guardian_name, guardian_phone, health, private_note, secret`,
	}},
	{"pii_unknown_scope", []string{
		`testdata/broken/pii_unknown_scope.yaml:44:54: pii rule of field "owner" names unknown scope "owners:read" (did you mean "things:read"?); declare it under scopes or fix the name`,
	}},
	{"pii_visible_with_on_input", []string{
		`testdata/broken/pii_visible_with_on_input.yaml:66:114: pii rule of input field "name" has visible_with; remove it (visible_with decides who receives an output field)`,
	}},
	{"pii_redactable_required", []string{
		`testdata/broken/pii_redactable_required.yaml:45:54: field "owner" can be redacted (visible_with "things:write") but is required; make the field optional (it is left out when redacted)`,
	}},
	{"in_text_on_input", []string{
		`testdata/broken/in_text_on_input.yaml:66:44: input field "name" has in_text; remove it; only outputs are shown in a tool result's text`,
	}},
	{"pii_otherwise_on_input", []string{
		`testdata/broken/pii_otherwise_on_input.yaml:66:111: pii rule of input field "name" has otherwise; remove it (otherwise decides what an output field becomes)`,
	}},
	{"pii_otherwise_unknown", []string{
		`testdata/broken/pii_otherwise_unknown.yaml:44:79: pii rule of field "owner" has unknown otherwise "short_nmae" (did you mean "short_name"?); use one of short_name`,
	}},
	{"pii_otherwise_without_visible_with", []string{
		`testdata/broken/pii_otherwise_without_visible_with.yaml:44:51: pii rule of field "owner" has otherwise but no visible_with; add visible_with: the scope whose holders receive the full value`,
	}},
	{"pii_otherwise_not_string", []string{
		`testdata/broken/pii_otherwise_not_string.yaml:44:79: pii rule of integer field "owner" has otherwise; remove it; a short name is a string`,
	}},
	{"pii_handoff_not_secret", []string{
		`testdata/broken/pii_handoff_not_secret.yaml:44:77: pii rule of field "owner" hands off guardian_name data; only secrets are handed off; use category: secret, or remove handoff`,
	}},
	{"pii_handoff_required", []string{
		`testdata/broken/pii_handoff_required.yaml:74:42: field "code" cannot be handed off (only optional top-level string outputs can); hand off an optional string at the top of the output`,
	}},
	{"pii_handoff_nested", []string{
		`testdata/broken/pii_handoff_nested.yaml:77:46: field "code" cannot be handed off (only optional top-level string outputs can); hand off an optional string at the top of the output`,
	}},
	{"pii_handoff_on_input", []string{
		`testdata/broken/pii_handoff_on_input.yaml:66:105: pii rule of input field "name" has handoff; remove it (a handoff is a value the server gives out)`,
	}},
	{"invalid_type", []string{
		`testdata/broken/invalid_type.yaml:37:18: field "id" has invalid type "strng" (did you mean "string"?); use one of string, integer, number, boolean, array, object`,
	}},
	{"invalid_format", []string{
		`testdata/broken/invalid_format.yaml:40:34: field "id" has invalid format "uid" (did you mean "uuid"?); use one of uuid, date, date-time, email, uri`,
	}},
	{"format_on_integer", []string{
		`testdata/broken/format_on_integer.yaml:69:35: field "id": format "uuid" applies to strings, not integer; use type: string, or remove format`,
	}},
	{"missing_capability_description", []string{
		`testdata/broken/missing_capability_description.yaml:56:3: tools.demo_thing_rename.description is missing; add a description an agent can act on`,
	}},
	{"missing_field_description", []string{
		`testdata/broken/missing_field_description.yaml:69:7: tools.demo_thing_rename.output.id.description is missing; add a description an agent can act on`,
	}},
	{"sensitive_without_warning", []string{
		`testdata/broken/sensitive_without_warning.yaml:11:3: sensitive scope "things:read" has no warning; add warning: {pt: …, en: …}, the consent page's LGPD warning for it`,
	}},
	{"warning_without_sensitive", []string{
		`testdata/broken/warning_without_sensitive.yaml:19:5: scope "things:write" has a warning but is not sensitive; remove the warning, or set sensitive: true`,
	}},
	{"warning_without_english", []string{
		"testdata/broken/warning_without_english.yaml:16:5: scopes.things:read.warning.en is missing; add the warning in English",
	}},
	{"missing_scope_description", []string{
		`testdata/broken/missing_scope_description.yaml:15:3: scopes.things:write.description is missing; add a description of what the scope grants`,
	}},
	{"empty_description", []string{
		`testdata/broken/empty_description.yaml:32:18: resources.thing.description is empty; write a description an agent can act on`,
	}},
	{"wrong_kind", []string{
		`testdata/broken/wrong_kind.yaml:2:7: kind "CapabilitySpec" is not "NeemiasCapabilitySpec"; set kind: NeemiasCapabilitySpec`,
	}},
	{"missing_kind", []string{
		`testdata/broken/missing_kind.yaml:1:1: kind is missing; add kind: NeemiasCapabilitySpec at the top`,
	}},
	{"unsupported_schema_version", []string{
		`testdata/broken/unsupported_schema_version.yaml:3:16: schemaVersion 2 is not supported (this generator reads 1); write the spec in version 1, or use a generator that reads version 2`,
	}},
	{"yaml_syntax_error", []string{
		`testdata/broken/yaml_syntax_error.yaml:31:4: invalid YAML: value is not allowed in this context; fix the YAML syntax`,
	}},
	{"yaml_unclosed_flow", []string{
		`testdata/broken/yaml_unclosed_flow.yaml:35:5: invalid YAML: ',' or ']' must be specified; fix the YAML syntax`,
	}},
	// A ": " in unquoted text, in each disguise YAML gives it (a syntax error, a mapping where
	// a string belongs, a key nobody declared): named as what it is, never as an unknown key.
	{"colon_in_description", []string{
		`testdata/broken/colon_in_description.yaml:32:33: invalid YAML: the text of description has ": ", and a colon followed by a space inside unquoted text starts a mapping; quote the text or write it as a block with >-`,
	}},
	{"colon_in_continuation_line", []string{
		`testdata/broken/colon_in_continuation_line.yaml:33:11: invalid YAML: the text of description has ": ", and a colon followed by a space inside unquoted text starts a mapping; quote the text or write it as a block with >-`,
	}},
	{"colon_in_flow_mapping", []string{
		`testdata/broken/colon_in_flow_mapping.yaml:66:69: invalid YAML: the text of description has ": ", and a colon followed by a space inside unquoted text starts a mapping; quote the text or write it as a block with >-`,
	}},
	{"colon_in_description_next_line", []string{
		`testdata/broken/colon_in_description_next_line.yaml:33:22: resources.thing.description must be a string, got a mapping: its text has ": ", and a colon followed by a space inside unquoted text starts a mapping; quote the text or write it as a block with >-`,
	}},
	{"colon_in_unindented_continuation", []string{
		`testdata/broken/colon_in_unindented_continuation.yaml:33:9: "Note: the uuid." in resources.thing reads as a key, not as text: a colon followed by a space inside unquoted text starts a mapping; if it continues description, quote the text or write it as a block with >-, its lines indented below description:`,
	}},
	{"colon_in_unindented_text", []string{
		`testdata/broken/colon_in_unindented_text.yaml:33:20: "One thing by id: the uuid." in resources.thing reads as a key, not as text: a colon followed by a space inside unquoted text starts a mapping; if it continues description, quote the text or write it as a block with >-, its lines indented below description:`,
	}},
	{"colon_in_block_dedent", []string{
		`testdata/broken/colon_in_block_dedent.yaml:34:9: "Note: the uuid." in resources.thing reads as a key, not as text: a colon followed by a space inside unquoted text starts a mapping; if it continues description, quote the text or write it as a block with >-, its lines indented below description:`,
	}},
	{"scalar_for_mapping", []string{
		`testdata/broken/scalar_for_mapping.yaml:37:7: resources.thing.input must be a mapping, got the scalar "id"; write a mapping of name: value`,
	}},
	{"scalar_for_list", []string{
		`testdata/broken/scalar_for_list.yaml:60:18: tools.demo_thing_rename.row_filters must be a list, got the scalar "church"; write a list, for example [a, b]`,
	}},
	{"not_a_boolean", []string{
		`testdata/broken/not_a_boolean.yaml:63:69: tools.demo_thing_rename.annotations.idempotent must be true or false, got the scalar "yes"; write true or false`,
	}},
	{"not_an_integer", []string{
		`testdata/broken/not_an_integer.yaml:54:14: resources.thing.query.limit must be an integer, got the scalar "one"; write a whole number`,
	}},
	{"missing_church_filter", []string{
		`testdata/broken/missing_church_filter.yaml:60:5: tool "demo_thing_rename" does not apply the "church" row filter; add church to its row_filters (every capability is tenant-scoped)`,
	}},
	{"row_filter_without_column", []string{
		`testdata/broken/row_filter_without_column.yaml:20:3: row filter "church" has no column; add column: the uuid column it tests, such as child_id`,
	}},
	{"row_filter_sqlc_arg", []string{
		`testdata/broken/row_filter_sqlc_arg.yaml:23:10: row filter "church": sql must not use sqlc parameters; use caller_church, caller_user or caller_role (the arguments of the generated rf_ function)`,
	}},
	{"tool_without_queries", []string{
		`testdata/broken/tool_without_queries.yaml:56:3: tool "demo_thing_rename" names no queries; add queries: [TheQuery, …], the queries/custom/ queries (by -- name:) that select the rows it acts on`,
	}},
	{"tool_query_name", []string{
		`testdata/broken/tool_query_name.yaml:61:15: tool "demo_thing_rename": query name "get_thing" is not a sqlc query name; use the query's -- name: such as GetChildForCheckin`,
	}},
	{"tool_without_audit_action", []string{
		`testdata/broken/tool_without_audit_action.yaml:56:3: tool "demo_thing_rename" has no audit_action; add audit_action: the audit log's verb for it, such as checkin`,
	}},
	{"no_church_filter_declared", []string{
		`testdata/broken/no_church_filter_declared.yaml:19:1: the spec has no "church" row filter; declare row_filters.church, the tenant isolation every capability applies`,
	}},
	{"unknown_row_filter", []string{
		`testdata/broken/unknown_row_filter.yaml:34:27: resource "thing" uses unknown row filter "owner_only"; declare it under row_filters or fix the name`,
	}},
	{"where_input_not_input", []string{
		`testdata/broken/where_input_not_input.yaml:53:31: resource "thing": where input "thing_id" is not an input; name one of the inputs: id`,
	}},
	{"tool_with_query", []string{
		`testdata/broken/tool_with_query.yaml:70:5: tool "demo_thing_rename" has a query (generated queries are for resources); remove it and write the tool's SQL in queries/custom/`,
	}},
	{"resource_query_name", []string{
		`testdata/broken/resource_query_name.yaml:35:15: resource "thing": query name "get_thing" is not a sqlc query name; use the query's -- name: such as ClassListChildren`,
	}},
	{"tool_without_annotations", []string{
		`testdata/broken/tool_without_annotations.yaml:56:3: tool "demo_thing_rename" has no annotations; add annotations: {read_only: …, destructive: …, idempotent: …, open_world: …}`,
	}},
	{"role_name_not_upper_case", []string{
		`testdata/broken/role_name_not_upper_case.yaml:25:3: role name "admin" is not upper case; use UPPER_CASE, for example ADMIN`,
	}},
	{"recursive_alias", []string{
		`testdata/broken/recursive_alias.yaml:48:43: alias *item refers to a value that contains it; point the alias at a value defined outside this one`,
	}},
	{"merge_key", []string{
		`testdata/broken/merge_key.yaml:69:12: YAML merge keys (<<) are not supported in tools.demo_thing_rename.output.id; write the keys out (anchors and aliases of whole values do work)`,
	}},
	{"two_documents", []string{
		`testdata/broken/two_documents.yaml:55:1: the spec holds more than one YAML document; remove the "---" and what follows, or merge it into the first document`,
	}},
	{"resource_id_not_snake_case", []string{
		`testdata/broken/resource_id_not_snake_case.yaml:29:3: resource id "Thing" is not snake_case; use lower-case snake_case such as roster_children`,
	}},
	{"cache_without_ttl", []string{
		`testdata/broken/cache_without_ttl.yaml:35:5: resources.thing.cache.ttl_ms is missing; add ttl_ms: N (milliseconds a reader may reuse the result)`,
	}},
	{"cache_ttl_out_of_range", []string{
		`testdata/broken/cache_ttl_out_of_range.yaml:35:21: resource "thing": ttl_ms 90000000 is out of range; use 0 to 86400000 (one day)`,
	}},
	{"query_limit_out_of_range", []string{
		`testdata/broken/query_limit_out_of_range.yaml:54:14: resource "thing": query limit 0 is out of range; use 1 to 100000`,
	}},
	{"role_without_scopes", []string{
		`testdata/broken/role_without_scopes.yaml:25:3: roles.ADMIN.scopes is missing; list the scopes the role may be granted ([] for none)`,
		`testdata/broken/role_without_scopes.yaml:32:12: resource "thing" is unreachable: no role has scope "things:read"; grant "things:read" to a role`,
		`testdata/broken/role_without_scopes.yaml:58:12: tool "demo_thing_rename" is unreachable: no role has scope "things:write"; grant "things:write" to a role`,
	}},
	{"server_description_too_long", []string{
		`testdata/broken/server_description_too_long.yaml:7:16: server.description is 173 characters long; shorten it to at most 100 (the MCP Registry limit)`,
	}},
	{"empty", []string{
		`testdata/broken/empty.yaml:1:1: the spec is empty; start from the example in docs/spec-reference.md`,
	}},
	{"comments_only", []string{
		`testdata/broken/comments_only.yaml:1:1: the spec is empty; start from the example in docs/spec-reference.md`,
	}},
	{"scalar_document", []string{
		`testdata/broken/scalar_document.yaml:2:1: the spec must be a mapping, got the scalar "NeemiasCapabilitySpec"; write a mapping of key: value`,
	}},
	{"list_document", []string{
		`testdata/broken/list_document.yaml:2:1: the spec must be a mapping, got a list; write a mapping of key: value`,
	}},
	{"example_unknown_ref", []string{
		`testdata/broken/example_unknown_ref.yaml:67:19: tool "demo_thing_rename": example of "id" refers to unknown fixture value $chlid (did you mean "$child"?); use a literal or one of the fixture's named values: ` + fixtureNames,
	}},
	{"example_missing_required", []string{
		`testdata/broken/example_missing_required.yaml:67:5: tool "demo_thing_rename": required input "name" has no example; add example: {name: …} with a literal or one of ` + fixtureNames + `, for the matrix tests`,
	}},
	{"example_unknown_input", []string{
		`testdata/broken/example_unknown_input.yaml:38:22: resource "thing": example of unknown input "idd" (did you mean "id"?); give examples of declared inputs only`,
	}},
	{"alias_bomb", []string{
		`testdata/broken/alias_bomb.yaml:42:121: the spec expands to more than 50000 values; use fewer YAML aliases (*name) or write the values out`,
	}},
}

// fixtureNames is how the two example messages list ExampleNames: derived, so a new fixture
// name needs no edit here.
var fixtureNames = func() string {
	var out []string
	for _, n := range ExampleNames {
		out = append(out, "$"+n)
	}
	return strings.Join(out, ", ")
}()

func TestDiagnostics(t *testing.T) {
	for _, tc := range brokenCases {
		t.Run(tc.name, func(t *testing.T) {
			file := "testdata/broken/" + tc.name + ".yaml"
			s, err := Load(file)
			if err == nil {
				t.Fatalf("Load(%s) = %v, nil; want diagnostics", file, s)
			}
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("Load(%s) error is %T (%v); want Diagnostics", file, err, err)
			}
			if diff := cmp.Diff(tc.want, strings.Split(ds.Error(), "\n")); diff != "" {
				t.Errorf("Load(%s) diagnostics (-want +got):\n%s", file, diff)
			}
		})
	}
}

// TestDiagnosticsCoverEveryFile fails on a broken spec nobody pinned, or a case without a file.
func TestDiagnosticsCoverEveryFile(t *testing.T) {
	files, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, f := range files {
		got = append(got, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	for _, tc := range brokenCases {
		want = append(want, tc.name)
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("testdata/broken/*.yaml vs brokenCases (-cases +files):\n%s", diff)
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	slices.Sort(out)
	return out
})

// TestTooManyProblems: past 100 diagnostics, Load counts the rest instead of printing them.
func TestTooManyProblems(t *testing.T) {
	src, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var unknown []string
	for i := range 130 {
		unknown = append(unknown, fmt.Sprintf("nope:%d", i))
	}
	edited := strings.Replace(string(src), "scopes: [things:read, things:write]", "scopes: [things:read, things:write, "+strings.Join(unknown, ", ")+"]", 1)
	_, err = Parse("many.yaml", []byte(edited))
	var ds Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("Parse error = %v; want Diagnostics", err)
	}
	if len(ds) != 101 {
		t.Fatalf("got %d diagnostics, want 100 and a last one saying how many more", len(ds))
	}
	if got, want := ds[100].String(), "many.yaml:27:922: too many problems: 30 more not shown; fix these and load the spec again"; got != want {
		t.Errorf("last diagnostic = %q, want %q", got, want)
	}
}

// TestValidBase proves the broken specs differ from a valid one only where they say.
func TestValidBase(t *testing.T) {
	if _, err := Load("testdata/valid.yaml"); err != nil {
		t.Fatalf("testdata/valid.yaml must load:\n%v", err)
	}
}

// TestDecodeScalarForms checks scalars are read as yaml.v3 resolves them, not only in their
// canonical spelling: True is true (it used to decode as false), 0x10 and 1_000 are integers.
func TestDecodeScalarForms(t *testing.T) {
	src, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.NewReplacer(
		"name: {type: string, required: true,", "name: {type: string, required: True,",
		"limit: 1\n", "limit: 0x10\n",
		"ttl_ms: 1000}", "ttl_ms: 1_000}",
	).Replace(string(src))
	s, err := Parse("edited.yaml", []byte(edited))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	thing, _ := s.Resources.Get("thing")
	rename, _ := s.Tools.Get("demo_thing_rename")
	name, _ := rename.Input.Get("name")
	if !name.Required {
		t.Error("required: True decoded as false")
	}
	if thing.Query.Limit != 16 {
		t.Errorf("limit: 0x10 decoded as %d, want 16", thing.Query.Limit)
	}
	if thing.Cache.TTLMillis != 1000 {
		t.Errorf("ttl_ms: 1_000 decoded as %d, want 1000", thing.Cache.TTLMillis)
	}
}
