package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// toolCmd is the command-line twin of every tool: `neemias-mcp tool NAME` runs a tool of the
// spec (or a resource's read tool) through the invocation pipeline MCP and REST use (the scope
// check, input validation, the hand-written logic, redaction, the audit log), acting as one
// account of a church with its role's scopes, and prints the structured result as JSON. The
// corrections of a record (neemias_child_correct, …_merge, neemias_consent_revoke) thus have a
// CLI without a command of their own; the audit entries say client neemias-mcp-cli.
func toolCmd() *cobra.Command {
	var (
		dbf           dbFlags
		church, as    string
		rawJSON       string
		list, compact bool
	)
	c := &cobra.Command{
		Use:   "tool NAME [key=value ...]",
		Short: "Run a tool (as MCP and REST would) as an account of a church; --list lists the tools",
		Long: `Run a tool of the capability spec, or a resource's read tool, as an account of a church:
the same pipeline as MCP and REST (scope check with the account's role scopes, input
validation, the tool's logic, redaction, audit log as client neemias-mcp-cli). The result is
printed as JSON; a refusal is an error naming the input or the reason, and the exit status is 1.

Arguments are key=value pairs (a dotted key fills an object: guardian.name=...; numbers and
booleans are read by the input's type; an object or array value is JSON), or one JSON object
with --json; key=value pairs given with --json replace its members.`,
		Example: `  neemias-mcp tool --list
  neemias-mcp tool neemias_child_correct --church central --as cadastro@central.example child_id=CHILD_ID birth_date=2019-03-15
  neemias-mcp tool neemias_child_merge --church central --as admin@central.example survivor_id=ID duplicate_id=ID
  neemias-mcp tool neemias_consent_revoke --church central --as admin@central.example --json '{"child_id":"ID"}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return errors.New("--list takes no tool name or arguments")
				}
				return nil
			}
			if len(args) == 0 {
				return errors.New("name the tool to run (neemias-mcp tool --list lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return listTools(cmd.OutOrStdout())
			}
			if church == "" || as == "" {
				return errors.New("--church and --as are required: the tool runs as an account of a church")
			}
			id, err := toolCapability(args[0])
			if err != nil {
				return err
			}
			in, err := toolArgs(id, rawJSON, args[1:])
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			p, err := toolCaller(cmd.Context(), st, church, as)
			if err != nil {
				return err
			}
			res, err := runTool(cmd.Context(), st, p, id, in)
			if err != nil {
				return toolError(args[0], p, err)
			}
			var out bytes.Buffer
			if compact {
				out.Write(res.JSON)
			} else if err := json.Indent(&out, res.JSON, "", "  "); err != nil {
				return err
			}
			out.WriteByte('\n')
			_, err = cmd.OutOrStdout().Write(out.Bytes())
			return err
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&church, "church", "", "the church's slug")
	fl.StringVar(&as, "as", "", "the account to act as: its email or user id (its role's scopes apply)")
	fl.StringVar(&rawJSON, "json", "", "the tool's arguments as one JSON object")
	fl.BoolVar(&list, "list", false, "list the tools, with their scope and the roles that may call them")
	fl.BoolVar(&compact, "compact", false, "print the result on one line")
	return c
}

// runTool calls capability id with the JSON arguments in as p: the pipeline of the server
// (the generated catalog over the logic, the scope check failing closed, refusals audited).
func runTool(ctx context.Context, st *store.Store, p principal.Principal, id string, in json.RawMessage) (pipeline.Result, error) {
	svc := logic.New(st, logic.WithLogger(logger()))
	gate, err := pipeline.New(pipeline.Config{Catalog: capapi.Catalog(svc), OnRefused: svc.OnRefused})
	if err != nil {
		return pipeline.Result{}, err
	}
	return gate.Call(principal.With(ctx, p), id, in)
}

// cliTools are the capabilities the command runs, by tool name: the spec's tools and the read
// tools of its resources (as tools/list names them); app-only and upstream tools are not.
func cliTools() map[string]capability.Capability {
	out := map[string]capability.Capability{}
	for _, c := range capapi.Capabilities() {
		switch {
		case !c.IsRead():
			out[c.Name] = c
		case !c.NoReadTool:
			out[capapi.ToolPrefix+c.ID] = c
		}
	}
	return out
}

// toolCapability is the capability id of tool name (a resource's id is accepted too).
func toolCapability(name string) (string, error) {
	tools := cliTools()
	if c, ok := tools[name]; ok {
		return c.ID, nil
	}
	if c, ok := capapi.Lookup(name); ok && c.IsRead() && !c.NoReadTool {
		return c.ID, nil
	}
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	hint := ""
	for _, n := range names {
		if strings.Contains(n, strings.TrimPrefix(name, capapi.ToolPrefix)) {
			hint = fmt.Sprintf(" (did you mean %q?)", n)
			break
		}
	}
	return "", fmt.Errorf("unknown tool %q%s; neemias-mcp tool --list lists them", name, hint)
}

// listTools writes the tools, their scope and the roles whose scopes hold it.
func listTools(w io.Writer) error {
	tools := cliTools()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSCOPE\tROLES\tTITLE")
	for _, n := range names {
		c := tools[n]
		var roles []string
		for _, r := range scopes.Roles() {
			if s, ok := scopes.RoleScopes(r); ok && s.Has(c.Scope) {
				roles = append(roles, r)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, c.Scope, strings.Join(roles, ","), c.Title)
	}
	return tw.Flush()
}

// schemaNode is what toolArgs reads of an input JSON Schema: types and members.
type schemaNode struct {
	Type       any                    `json:"type"`
	Properties map[string]*schemaNode `json:"properties"`
}

func (n *schemaNode) is(t string) bool {
	switch v := n.Type.(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return t == "object" && n.Properties != nil
}

func (n *schemaNode) members() string {
	names := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// toolArgs builds the JSON arguments of capability id from --json and key=value pairs, typed
// by the tool's input schema; an unknown key is refused with the inputs the tool has. The
// values are not echoed in errors: they may be personal data.
func toolArgs(id, rawJSON string, pairs []string) (json.RawMessage, error) {
	var root schemaNode
	e, _ := capapi.Catalog(capapi.UnimplementedHandler{}).Lookup(id)
	if err := json.Unmarshal(e.InputSchema, &root); err != nil {
		return nil, fmt.Errorf("the input schema of %s: %w", id, err)
	}
	args := map[string]any{}
	if strings.TrimSpace(rawJSON) != "" {
		dec := json.NewDecoder(strings.NewReader(rawJSON))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, errors.New("--json must be one JSON object of the tool's arguments")
		}
	}
	for _, kv := range pairs {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("argument %q is not key=value", strings.SplitN(kv, "=", 2)[0])
		}
		node, obj := &root, args
		path := strings.Split(key, ".")
		for i, part := range path {
			next, ok := node.Properties[part]
			if !ok {
				where := "the tool"
				if i > 0 {
					where = strconv.Quote(strings.Join(path[:i], "."))
				}
				return nil, fmt.Errorf("%q is not an input of %s; its inputs: %s", key, where, node.members())
			}
			node = next
			if i == len(path)-1 {
				v, err := typed(key, val, node)
				if err != nil {
					return nil, err
				}
				obj[part] = v
				break
			}
			if !node.is("object") {
				return nil, fmt.Errorf("%q: %s is not an object", key, strings.Join(path[:i+1], "."))
			}
			child, _ := obj[part].(map[string]any)
			if child == nil {
				child = map[string]any{}
				obj[part] = child
			}
			obj = child
		}
	}
	return json.Marshal(args)
}

// typed reads a key=value value by the input's type.
func typed(key, val string, n *schemaNode) (any, error) {
	switch {
	case n.is("string"):
		return val, nil
	case n.is("boolean"):
		b, err := strconv.ParseBool(val)
		if err != nil {
			return nil, fmt.Errorf("%s must be true or false", key)
		}
		return b, nil
	case n.is("integer"):
		i, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number", key)
		}
		return i, nil
	case n.is("number"):
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a number", key)
		}
		return f, nil
	}
	var v any
	if err := json.Unmarshal([]byte(val), &v); err != nil {
		return nil, fmt.Errorf("%s must be JSON (an object or a list)", key)
	}
	return v, nil
}

// toolCaller is the principal of account as (email or user id) of the church: its role and
// every scope of its role; a disabled account is refused.
func toolCaller(ctx context.Context, st *store.Store, churchSlug, as string) (principal.Principal, error) {
	var ch onboard.Church
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ch, err = onboard.ChurchBySlug(ctx, tx, churchSlug)
		return err
	}); err != nil {
		return principal.Principal{}, err
	}
	users, err := onboard.ListUsers(ctx, st, ch.Slug)
	if err != nil {
		return principal.Principal{}, err
	}
	want := strings.ToLower(strings.TrimSpace(as))
	id, idErr := uuid.Parse(want)
	for _, u := range users {
		if u.Email != want && (idErr != nil || u.ID != id) {
			continue
		}
		if u.DisabledAt != nil {
			return principal.Principal{}, fmt.Errorf("--as: the account %q is disabled", u.Email)
		}
		s, ok := scopes.RoleScopes(u.Role)
		if !ok {
			return principal.Principal{}, fmt.Errorf("--as: the account %q has role %s, which the spec does not know", u.Email, u.Role)
		}
		return principal.Principal{UserID: u.ID, ChurchID: ch.ID, Role: u.Role, Scopes: s, ClientID: audit.OperatorClientID}, nil
	}
	return principal.Principal{}, fmt.Errorf("--as: church %q has no account %q (neemias-mcp user list --church %s)", ch.Slug, as, ch.Slug)
}

// toolError is a tool's refusal as the operator reads it: the domain error's own text (never
// personal data), with what to do for a missing scope.
func toolError(name string, p principal.Principal, err error) error {
	var f *errs.Forbidden
	switch {
	case errors.As(err, &f):
		return fmt.Errorf("%s: role %s may not call it (it needs scope %s); act as an account whose role holds it (neemias-mcp tool --list)", name, p.Role, f.Scope)
	case errs.KindOf(err) == errs.KindInternal:
		return fmt.Errorf("%s failed: %w", name, err)
	}
	return fmt.Errorf("%s refused: %w", name, err)
}
