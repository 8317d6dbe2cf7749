package capgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// RowFilterMigration is the generated goose migration that creates one SQL function per row
// filter of the spec, the scope check of the spec's roles (app_role_has_scope) and of the
// caller's effective scopes (rf_has_scope, [ScopeFn]). It sorts after the hand-written
// schema migrations and before the row-level security migration that calls the functions.
const RowFilterMigration = "queries/schema/00090_spec_row_filters.sql"

// RowFilterFn is the SQL function of one spec row filter:
//
//	rf_<name>(<column> uuid, caller_… DEFAULT the transaction's caller) RETURNS boolean
//
// Filters that name roles pass every other role; their condition runs in a SECURITY DEFINER
// helper, rf_<name>_match, so a policy calling the function never recurses into the policies of
// the tables the condition reads. The outer function is plain SQL without sub-selects, so
// PostgreSQL inlines it: the role test costs nothing for the roles the filter does not bind.
type RowFilterFn struct {
	Name        string   // spec name: guardian_own_children
	Func        string   // rf_guardian_own_children
	Description string   // from the spec
	Column      string   // the tested column, the first argument
	Roles       []string // empty: every role
	SQL         string   // the spec's condition
	Caller      []string // caller arguments the function takes: caller_church, caller_user, caller_role
}

// callerArgs are the caller arguments a row filter function may take, in signature order, with
// the caller-context function (migration 00001) each defaults to and its SQL type.
var callerArgs = []struct{ Name, Default, Type, SQLCParam string }{
	{"caller_church", "app_church_id()", "uuid", "church_id"},
	{"caller_user", "app_user_id()", "uuid", "user_id"},
	{"caller_role", "app_role()", "text", "role"},
}

var callerRef = regexp.MustCompile(`\bcaller_(church|user|role)\b`)

// ScopeFn is the SQL function that tests whether the transaction's caller holds a scope (its
// effective scopes, app.scopes, within its role's); generated resource queries call it.
const ScopeFn = "rf_has_scope"

// RowFilterFns returns the functions of the spec's row filters, in spec order.
func (m *Model) RowFilterFns() []RowFilterFn { return m.rowFilters }

func newRowFilterFns(s *spec.Spec) []RowFilterFn {
	var out []RowFilterFn
	for _, e := range s.RowFilters {
		fn := RowFilterFn{
			Name: e.Name, Func: "rf_" + e.Name, Description: strings.TrimSpace(e.Value.Description),
			Column: e.Value.Column, Roles: e.Value.Roles, SQL: strings.TrimSpace(e.Value.SQL),
		}
		used := map[string]bool{}
		for _, ref := range callerRef.FindAllString(fn.SQL, -1) {
			used[ref] = true
		}
		if len(fn.Roles) > 0 {
			used["caller_role"] = true
		}
		for _, a := range callerArgs {
			if used[a.Name] {
				fn.Caller = append(fn.Caller, a.Name)
			}
		}
		out = append(out, fn)
	}
	return out
}

// RowFilterFn returns the function of the named row filter.
func (m *Model) RowFilterFn(name string) (RowFilterFn, bool) {
	for _, fn := range m.RowFilterFns() {
		if fn.Name == name {
			return fn, true
		}
	}
	return RowFilterFn{}, false
}

// Call is the filter applied to column with the caller passed as sqlc parameters (church_id,
// user_id, role), the form of the generated queries: explicit arguments keep the queries'
// parameters what the handlers pass, and a plan does not depend on the transaction settings.
func (fn RowFilterFn) Call(column string) string {
	args := []string{column}
	for _, a := range callerArgs {
		if slices.Contains(fn.Caller, a.Name) {
			args = append(args, fmt.Sprintf("sqlc.arg(%s)::%s", a.SQLCParam, a.Type))
		}
	}
	return fmt.Sprintf("%s(%s)", fn.Func, strings.Join(args, ", "))
}

func (fn RowFilterFn) params(withDefaults bool) string {
	ps := []string{fn.Column + " uuid"}
	for _, a := range callerArgs {
		if slices.Contains(fn.Caller, a.Name) {
			p := a.Name + " " + a.Type
			if withDefaults {
				p += " DEFAULT " + a.Default
			}
			ps = append(ps, p)
		}
	}
	return strings.Join(ps, ", ")
}

func (fn RowFilterFn) argNames() string {
	names := []string{fn.Column}
	for _, a := range callerArgs {
		if slices.Contains(fn.Caller, a.Name) && a.Name != "caller_role" {
			names = append(names, a.Name)
		}
	}
	return strings.Join(names, ", ")
}

func (fn RowFilterFn) matchParams() string {
	ps := []string{fn.Column + " uuid"}
	for _, a := range callerArgs {
		if slices.Contains(fn.Caller, a.Name) && a.Name != "caller_role" {
			ps = append(ps, a.Name+" "+a.Type)
		}
	}
	return strings.Join(ps, ", ")
}

func (fn RowFilterFn) signatureTypes(match bool) string {
	ts := []string{"uuid"}
	for _, a := range callerArgs {
		if slices.Contains(fn.Caller, a.Name) && !(match && a.Name == "caller_role") {
			ts = append(ts, a.Type)
		}
	}
	return strings.Join(ts, ", ")
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return strings.Join(q, ", ")
}

// rowFilterMigrationTmpl is [RowFilterMigration]. CREATE OR REPLACE keeps the Up section
// re-runnable, and the marker makes store.Migrate re-run it whenever its text changes, so a
// database migrated before a spec change gets the new functions (internal/store/repeatable.go; TestRowFilterMigrationIsRepeatable pins the marker).
const rowFilterMigrationTmpl = `-- Code generated by capgen. DO NOT EDIT.
-- Source: {{.SpecPath}}
-- +neemias repeatable (store.Migrate re-runs the Up section when this file's text changes)
--
-- The spec's row filters as SQL functions, one per filter, and the scopes of its roles. The
-- generated queries (queries/generated/), the tool queries (queries/custom/) and the row-level
-- security policies (00110) call these functions, so a filter is written once, in the spec.
-- Each function reads the caller from the transaction's settings (00001) unless the caller is
-- passed explicitly, as the generated queries do.

-- +goose Up
{{range .RowFilterFns}}
-- {{.Description}}
{{- if not .Roles}}
-- Every role.
CREATE OR REPLACE FUNCTION {{.Func}}({{.Params}}) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT {{.SQL}}
$$;
{{- else}}
-- Only {{join .Roles ", "}}; every other role passes.
CREATE OR REPLACE FUNCTION {{.Func}}_match({{.MatchParams}}) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT {{.SQL}}
$$;
CREATE OR REPLACE FUNCTION {{.Func}}({{.Params}}) RETURNS boolean
    LANGUAGE sql STABLE
AS $$
    SELECT {{.RoleCondition}} OR {{.Func}}_match({{.MatchArgs}})
$$;
REVOKE ALL ON FUNCTION {{.Func}}_match({{.MatchSignature}}) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION {{.Func}}_match({{.MatchSignature}}) TO neemias_app;
{{- end}}
{{end}}
-- The scope matrix of the spec's roles: whether the caller's role may hold scope.
CREATE OR REPLACE FUNCTION app_role_has_scope(scope text, caller_role text DEFAULT app_role()) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE caller_role
{{- range .Roles}}
        WHEN '{{.Name}}' THEN scope IN ({{sqlList .Scopes}})
{{- end}}
        ELSE false
    END
$$;

-- Whether the caller holds scope: one of the effective scopes (the token's, within its role's)
-- the store puts in the transaction's settings (app.scopes, space-separated, with the rest of
-- the caller context). Fails closed: no setting, no scope. Every generated resource query, and
-- every query of a read-only tool, requires its capability's scope through it.
CREATE OR REPLACE FUNCTION rf_has_scope(scope text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT coalesce(scope = ANY (string_to_array(current_setting('app.scopes', true), ' ')), false)
$$;

-- The spec's roles, for the CHECK constraints of the tables that store a role.
CREATE OR REPLACE FUNCTION app_valid_role(r text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT r IN ({{sqlList .RoleNames}})
$$;

-- +goose Down
{{- range .RowFilterDrops}}
{{.}}
{{- end}}
`

// RowFilterDrops are the Down section of [RowFilterMigration]: every function it creates, in
// reverse order.
func (m *Model) RowFilterDrops() []string {
	var drops []string
	for _, fn := range m.RowFilterFns() {
		drops = append(drops, fmt.Sprintf("DROP FUNCTION IF EXISTS %s(%s);", fn.Func, fn.signatureTypes(false)))
		if len(fn.Roles) > 0 {
			drops = append(drops, fmt.Sprintf("DROP FUNCTION IF EXISTS %s_match(%s);", fn.Func, fn.signatureTypes(true)))
		}
	}
	drops = append(drops, "DROP FUNCTION IF EXISTS app_role_has_scope(text, text);", "DROP FUNCTION IF EXISTS rf_has_scope(text);",
		"DROP FUNCTION IF EXISTS app_valid_role(text);")
	slices.Reverse(drops)
	return drops
}

// Params is the function's parameter list, the caller arguments defaulting to the
// transaction's caller.
func (fn RowFilterFn) Params() string { return fn.params(true) }

// MatchParams is the parameter list of the SECURITY DEFINER helper (no role: the outer
// function tests it).
func (fn RowFilterFn) MatchParams() string { return fn.matchParams() }

// MatchArgs are the arguments the outer function passes to the helper.
func (fn RowFilterFn) MatchArgs() string { return fn.argNames() }

// MatchSignature is the helper's argument types, for REVOKE and GRANT.
func (fn RowFilterFn) MatchSignature() string { return fn.signatureTypes(true) }

// RoleCondition is true for the roles the filter does not bind.
func (fn RowFilterFn) RoleCondition() string {
	if len(fn.Roles) > 1 {
		return fmt.Sprintf("caller_role IS NULL OR caller_role NOT IN (%s)", quoteList(fn.Roles))
	}
	return fmt.Sprintf("caller_role IS DISTINCT FROM %s", quoteList(fn.Roles))
}

// RowFilterMigrationSQL renders [RowFilterMigration].
func (m *Model) RowFilterMigrationSQL() (string, error) {
	b, err := render(m, rowFilterMigrationTmpl)
	return string(b), err
}

// sqlcName matches the "-- name: X :kind" line that starts each sqlc query.
var sqlcName = regexp.MustCompile(`(?m)^--\s*name:\s*([A-Za-z0-9_]+)\s+:[a-z]+\s*$`)

// SplitQueries returns the sqlc queries of a .sql file, by name: each from its "-- name:"
// line to the next one.
func SplitQueries(sql string) map[string]string {
	out := map[string]string{}
	locs := sqlcName.FindAllStringSubmatchIndex(sql, -1)
	for i, l := range locs {
		end := len(sql)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[sql[l[2]:l[3]]] = sql[l[0]:end]
	}
	return out
}

// CheckToolQueries reports every tool, and every resource that names hand-written queries
// instead of a generated query, whose declared queries (the spec's queries:) are missing from
// queries, the hand-written sqlc queries by name, or do not call the SQL function of every row
// filter the capability names, or, for a read (a resource or a read-only tool), do not require
// its scope with rf_has_scope('<scope>') as the generated resource queries do. Comments do not
// count as calls. (The name predates resources' queries: it checks every hand-written query.)
func (m *Model) CheckToolQueries(queries map[string]string) []error {
	var errs []error
	for _, c := range m.Caps {
		what := "tool"
		if c.Kind != "tool" {
			what = "resource"
		}
		// A resource or a read-only tool is a read: the database requires its scope, as in
		// the generated resource queries.
		read := what == "resource" || (c.Annotations != nil && c.Annotations.ReadOnly != nil && *c.Annotations.ReadOnly)
		for _, q := range c.Queries {
			sql, ok := queries[q]
			if !ok {
				errs = append(errs, fmt.Errorf("%s %q (%s): query %s is not in queries/custom/", what, c.ID, c.Source(m), q))
				continue
			}
			code := stripSQLComments(sql)
			if read {
				call := fmt.Sprintf("%s(%s)", ScopeFn, quoteList([]string{c.Scope}))
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(ScopeFn) + `\s*\(\s*` + regexp.QuoteMeta(quoteList([]string{c.Scope})) + `\s*\)`).MatchString(code) {
					errs = append(errs, fmt.Errorf("%s %q (%s): query %s of a read does not call %s, its scope", what, c.ID, c.Source(m), q, call))
				}
			}
			for _, name := range c.RowFilters {
				fn, _ := m.RowFilterFn(name)
				if !regexp.MustCompile(`\b` + fn.Func + `\s*\(`).MatchString(code) {
					errs = append(errs, fmt.Errorf("%s %q (%s): query %s does not call %s(…), its row filter %q", what, c.ID, c.Source(m), q, fn.Func, name))
				}
			}
		}
	}
	return errs
}

var sqlComment = regexp.MustCompile(`--[^\n]*`)

func stripSQLComments(sql string) string { return sqlComment.ReplaceAllString(sql, "") }

// CustomQueriesDir holds the hand-written sqlc queries, relative to the repository root.
const CustomQueriesDir = "queries/custom"

// CheckToolQueriesIn runs [Model.CheckToolQueries] on the .sql files of CustomQueriesDir under
// root; generate and check run it, so a tool or resource query that lost a row filter fails
// before sqlc.
func (m *Model) CheckToolQueriesIn(root string) error {
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(CustomQueriesDir), "*.sql"))
	if err != nil {
		return err
	}
	all := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for name, q := range SplitQueries(string(b)) {
			all[name] = q
		}
	}
	return errors.Join(m.CheckToolQueries(all)...)
}
