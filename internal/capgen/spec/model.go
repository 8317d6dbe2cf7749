package spec

// Kind is the only accepted value of the spec's `kind` key.
const Kind = "NeemiasCapabilitySpec"

// SchemaVersion is the spec format version this generator reads. Bump it, and write a
// migration note in docs/spec-reference.md, when the format changes incompatibly.
const SchemaVersion = 1

// Spec is a capability spec: the whole of spec/capabilities.yaml.
type Spec struct {
	Kind          string          `yaml:"kind" jsonschema:"required,enum=NeemiasCapabilitySpec" jsonschema_description:"Always NeemiasCapabilitySpec."`
	SchemaVersion int             `yaml:"schemaVersion" jsonschema:"required,enum=1" jsonschema_description:"Version of the spec format; this generator reads 1."`
	Server        Server          `yaml:"server" jsonschema:"required" jsonschema_description:"What the server is called in the MCP Registry and in initialize."`
	Scopes        Map[Scope]      `yaml:"scopes" jsonschema:"required" jsonschema_description:"OAuth scopes, by name (for example roster:read)."`
	RowFilters    Map[RowFilter]  `yaml:"row_filters" jsonschema_description:"Row filters, by name: SQL conditions the generated queries apply, for all roles or only for some."`
	Roles         Map[Role]       `yaml:"roles" jsonschema:"required" jsonschema_description:"Roles, by name, with the scopes each may be granted (the scope matrix)."`
	Resources     Map[Capability] `yaml:"resources" jsonschema_description:"MCP resources, by id (snake_case)."`
	Tools         Map[Capability] `yaml:"tools" jsonschema_description:"MCP tools, by wire name (snake_case, starting with server.tool_prefix)."`
	Upstreams     Map[Upstream]   `yaml:"upstreams" jsonschema_description:"Allowlisted upstream MCP servers, by id (snake_case): the tools of each that become Neemias tools. URLs, credentials and the feature flag are runtime configuration."`
	Views         Map[View]       `yaml:"views" jsonschema_description:"MCP Apps views (io.modelcontextprotocol/ui): ui:// resources holding one HTML document each, linked to the tools whose results they render; by id (snake_case)."`

	// File is the path the spec was loaded from, as given to Load (for Source: lines).
	File string `yaml:"-"`
	pos  positions
}

// Line returns the line where the spec path (for example "tools.neemias_child_enroll") is
// declared, for `Source:` comments and docs.
func (s *Spec) Line(path string) int { return s.pos.keyAt(path).Line }

// Server describes the server as a whole.
type Server struct {
	Name        string `yaml:"name" jsonschema:"required" jsonschema_description:"Reverse-DNS registry name, for example io.github.owner/name."`
	Title       string `yaml:"title" jsonschema:"required" jsonschema_description:"Human-readable name."`
	Description string `yaml:"description" jsonschema:"required,maxLength=100" jsonschema_description:"One line, at most 100 characters (MCP Registry limit)."`
	Version     string `yaml:"version" jsonschema:"required" jsonschema_description:"Semantic version of the capability surface."`
	Website     string `yaml:"website" jsonschema_description:"Project home page."`
	ToolPrefix  string `yaml:"tool_prefix" jsonschema_description:"Prefix every tool name carries (for example neemias_); stripped from Go names."`
}

// Scope is an OAuth scope.
type Scope struct {
	Description string `yaml:"description" jsonschema:"required" jsonschema_description:"What the scope grants, for developers and docs."`
	En          string `yaml:"en" jsonschema:"required" jsonschema_description:"Consent-page wording in English."`
	Pt          string `yaml:"pt" jsonschema:"required" jsonschema_description:"Consent-page wording in Brazilian Portuguese."`
	Sensitive   bool   `yaml:"sensitive" jsonschema_description:"True when the scope reaches personal data; the consent page warns about it, in the words of warning."`
	// Warning is required exactly when Sensitive is set.
	Warning *ScopeWarning `yaml:"warning" jsonschema_description:"The consent page's LGPD warning for this scope (required with sensitive: true, refused without it): what the application would reach, and whether the person has the legal authority to grant it."`
}

// ScopeWarning is a sensitive scope's LGPD warning on the consent page, in both languages.
type ScopeWarning struct {
	Pt string `yaml:"pt" jsonschema:"required" jsonschema_description:"The warning in Brazilian Portuguese, shown first."`
	En string `yaml:"en" jsonschema:"required" jsonschema_description:"The warning in English."`
}

// RowFilter is a named SQL condition over one column. The generator turns each into one SQL
// function, rf_<name>(<column> uuid, caller_… DEFAULT the transaction's caller), created by a
// generated migration and called by the generated queries, the hand-written tool queries and
// the row-level security policies.
type RowFilter struct {
	Description string   `yaml:"description" jsonschema:"required" jsonschema_description:"Who sees what, in one sentence."`
	Roles       []string `yaml:"roles" jsonschema_description:"Roles the filter applies to; absent means every role."`
	Column      string   `yaml:"column" jsonschema:"required" jsonschema_description:"The uuid column the filter tests: the first argument of its SQL function rf_<name>, and the column of a resource's query the generated SQL passes."`
	SQL         string   `yaml:"sql" jsonschema:"required" jsonschema_description:"A boolean SQL condition over the column; may use caller_church, caller_user and caller_role (the caller's church, user and role). It runs as the schema owner (SECURITY DEFINER) when the filter names roles."`
}

// Role is a caller role and the scopes it may be granted.
type Role struct {
	Description string   `yaml:"description" jsonschema:"required" jsonschema_description:"Who has this role."`
	Scopes      []string `yaml:"scopes" jsonschema:"required" jsonschema_description:"Scopes a token of this role may carry."`
}

// Capability is a resource or a tool.
type Capability struct {
	URI         string       `yaml:"uri" jsonschema_description:"Resources only: the fixed URI or the RFC 6570 URI template; every template variable must be an input."`
	Title       string       `yaml:"title" jsonschema:"required" jsonschema_description:"Short human-readable title."`
	Description string       `yaml:"description" jsonschema:"required" jsonschema_description:"What it does and when an agent should use it."`
	Scope       string       `yaml:"scope" jsonschema:"required" jsonschema_description:"The scope a caller needs."`
	RowFilters  []string     `yaml:"row_filters" jsonschema_description:"Row filters applied to its data; church is mandatory."`
	Cache       *Cache       `yaml:"cache" jsonschema_description:"Resources only: cache hints for readers."`
	Annotations *Annotations `yaml:"annotations" jsonschema_description:"Tools only: MCP tool annotations."`
	Input       Map[Field]   `yaml:"input" jsonschema_description:"Input fields, by name (snake_case)."`
	Output      Map[Field]   `yaml:"output" jsonschema:"required" jsonschema_description:"Output fields, by name (snake_case)."`
	Example     Map[Example] `yaml:"example" jsonschema_description:"Valid example arguments, by input name, that the tests call it with: literals, or references to the test fixture's named values written $name ($birth_date, $checkin, $child, $child_handle, $class, $day, $duplicate_child, $duplicate_guardian, $fresh_name, $guardian, $leaving_child, $pickup_adult, $pickup_adult_id, $pickup_code). Required whenever an input is."`
	Query       *Query       `yaml:"query" jsonschema_description:"Resources only: the read query the generator emits for sqlc; a resource may also, or instead, name hand-written queries."`
	AuditAction string       `yaml:"audit_action" jsonschema_description:"Tools only: the audit log's action for a successful call (checkin, enroll, …); refusals append the reason (checkin.forbidden). Resources are read."`
	Queries     []string     `yaml:"queries" jsonschema_description:"The hand-written sqlc queries (queries/custom/, by -- name:) that select the rows a tool acts on (required for tools) or a resource reads (instead of query); each must call rf_<name> for every row filter of the capability but church's writes, which row-level security checks, and those of a resource or a read-only tool rf_has_scope('<its scope>')."`
	Summary     string       `yaml:"summary" jsonschema_description:"A one-sentence narrative for the model, put before the JSON in tool results' text: a Go text/template over the output by JSON name, such as {{len .checkins}} check-ins on {{.date}}; may call len, distinct LIST \"field\" and plural COUNT \"one\" \"many\" (prints 1 class, 2 classes); never names personal data. Resources/read stays JSON."`
}

// Cache holds cache hints (2026-07-28 ttlMs).
type Cache struct {
	TTLMillis int64 `yaml:"ttl_ms" jsonschema:"required,minimum=0,maximum=86400000" jsonschema_description:"How long a reader may reuse the result, in milliseconds."`
}

// Annotations are MCP tool annotations (hints to clients).
type Annotations struct {
	ReadOnly    *bool `yaml:"read_only" jsonschema_description:"The tool does not modify anything."`
	Destructive *bool `yaml:"destructive" jsonschema_description:"The tool may destroy or overwrite data."`
	Idempotent  *bool `yaml:"idempotent" jsonschema_description:"Calling it again with the same input has no further effect."`
	OpenWorld   *bool `yaml:"open_world" jsonschema_description:"The tool reaches outside Neemias."`
}

// Field is an input or output field.
type Field struct {
	Type        string     `yaml:"type" jsonschema:"required,enum=string,enum=integer,enum=number,enum=boolean,enum=array,enum=object" jsonschema_description:"JSON type."`
	Format      string     `yaml:"format" jsonschema:"enum=uuid,enum=date,enum=date-time,enum=email,enum=uri" jsonschema_description:"String format."`
	Description string     `yaml:"description" jsonschema:"required" jsonschema_description:"What the field means, for an agent."`
	Required    bool       `yaml:"required" jsonschema_description:"The field must be present."`
	Enum        []string   `yaml:"enum" jsonschema_description:"Allowed values of a string."`
	MinLength   *int       `yaml:"min_length" jsonschema_description:"Minimum string length."`
	MaxLength   *int       `yaml:"max_length" jsonschema_description:"Maximum string length."`
	Pattern     string     `yaml:"pattern" jsonschema_description:"Regular expression a string must match."`
	Minimum     *int64     `yaml:"minimum" jsonschema_description:"Minimum of an integer."`
	Maximum     *int64     `yaml:"maximum" jsonschema_description:"Maximum of an integer."`
	Complete    bool       `yaml:"complete" jsonschema_description:"Resource template variables only: completion/complete offers values."`
	Items       *Field     `yaml:"items" jsonschema_description:"Arrays only: the element."`
	Fields      Map[Field] `yaml:"fields" jsonschema_description:"Objects only: the members, by name."`
	PII         *PII       `yaml:"pii" jsonschema_description:"Personal-data rule: redacted in logs; returned only with visible_with."`
	// InText false keeps an output field out of the text a model reads (ids it never passes on).
	InText *bool `yaml:"in_text" jsonschema_description:"Output fields only: false leaves the field out of the text of MCP tool results, the part a model reads (an id no next call takes, repeated on every row); structuredContent, resources/read and REST keep it."`
}

// PII is the personal-data rule of a field.
type PII struct {
	Category    string `yaml:"category" jsonschema:"required,enum=child_name,enum=birth_date,enum=guardian_name,enum=guardian_phone,enum=health,enum=private_note,enum=secret" jsonschema_description:"What kind of personal data the field holds (private_note: free text about a person, such as a pick-up restriction's note)."`
	VisibleWith string `yaml:"visible_with" jsonschema_description:"Output fields only: the scope a caller needs to receive it; otherwise it is left out."`
	// Otherwise replaces leaving the field out: callers without visible_with receive the
	// value in a reduced form instead, the same for every capability that declares it.
	Otherwise string `yaml:"otherwise" jsonschema:"enum=short_name" jsonschema_description:"Output string fields with visible_with only: what callers without that scope receive instead of nothing. short_name: the first name and the initial of the last (Ana S.), lengthened until distinct within its list (Ana So., Ana Si.)."`
	// Handoff marks a secret meant for a person, not for the model that called the tool.
	Handoff string `yaml:"handoff" jsonschema_description:"Top-level optional secret output fields only: the value is for a person, not the model. Over MCP a client with MCP Apps receives it in the result's _meta for the view (never in content or structuredContent); other MCP clients receive it once in the text, after this note. REST returns it in the JSON."`
}

// Query is a generated read query over a view or table.
type Query struct {
	From    string   `yaml:"from" jsonschema:"required" jsonschema_description:"The view or table (defined in queries/schema)."`
	Select  []string `yaml:"select" jsonschema:"required" jsonschema_description:"Columns to return."`
	Where   []Where  `yaml:"where" jsonschema_description:"Conditions binding inputs to columns (the row filters are added automatically)."`
	OrderBy []string `yaml:"order_by" jsonschema_description:"Columns to order by."`
	Limit   int      `yaml:"limit" jsonschema:"required,minimum=1,maximum=100000" jsonschema_description:"Upper bound on rows returned."`
}

// Where binds one input to one column.
type Where struct {
	Column   string `yaml:"column" jsonschema:"required" jsonschema_description:"The column."`
	Op       string `yaml:"op" jsonschema:"enum==,enum=<,enum=<=,enum=>,enum=>=" jsonschema_description:"Comparison; default =."`
	Input    string `yaml:"input" jsonschema:"required" jsonschema_description:"The input field compared with the column."`
	Optional bool   `yaml:"optional" jsonschema_description:"When the input is absent the condition is skipped."`
}

// Entry is one named member of a Map, in file order.
type Entry[T any] struct {
	Name  string
	Value T
}

// Map is a YAML mapping that keeps file order, so generated code follows the spec's order.
type Map[T any] []Entry[T]

// JSONSchemaAlias makes github.com/invopop/jsonschema (internal/capgen/specschema) describe a
// Map as it is written in YAML, an object whose members are T, rather than as the list of
// entries it is in Go.
func (Map[T]) JSONSchemaAlias() any { return map[string]T(nil) }

// Get returns the value named name.
func (m Map[T]) Get(name string) (T, bool) {
	for _, e := range m {
		if e.Name == name {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}

// index returns the values by name.
func (m Map[T]) index() map[string]T {
	out := make(map[string]T, len(m))
	for _, e := range m {
		if _, dup := out[e.Name]; !dup {
			out[e.Name] = e.Value
		}
	}
	return out
}

// set returns the names as a set.
func (m Map[T]) set() map[string]bool {
	out := make(map[string]bool, len(m))
	for _, e := range m {
		out[e.Name] = true
	}
	return out
}

// Names returns the names in file order.
func (m Map[T]) Names() []string {
	out := make([]string, len(m))
	for i, e := range m {
		out[i] = e.Name
	}
	return out
}
