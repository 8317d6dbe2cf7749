package capability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Invoker runs one capability on its arguments (a JSON object not yet validated): it
// validates, decodes, calls the handler and finalizes the output for granted. The scope check
// is the pipeline's, made before an invoker runs.
type Invoker func(ctx context.Context, granted ScopeSet, args json.RawMessage) (any, error)

// Entry is one capability of a [Catalog]: everything the runtime looks up by its id. The
// spec's entries are one generated literal (gen/capapi); upstream tools and test fixtures are
// extra entries ([Catalog.With]).
type Entry struct {
	Capability
	// InputSchema is the JSON Schema (an object schema) tools/list shows and the invoker
	// validates against; OutputSchema is the declared output's, or nil.
	InputSchema, OutputSchema json.RawMessage
	// Operation is the REST (ogen) operation that serves the capability; empty: not on REST.
	Operation string
	// AuditAs, when set, is the capability name refused calls are audited under (an upstream
	// tool's "upstream:<id>/<tool>"); empty: ID.
	AuditAs string
	// Session marks a capability whose handler talks to the client while it runs (mcp.Log,
	// mcp.Progress): its MCP requests need the engine's session.
	Session bool
	// Invoke runs the capability. Required, but for an alias.
	Invoke Invoker
	// Runs makes the entry an alias: another wire name (ID, Name, and optionally its own Title
	// and Description) of the tool Runs, such as a view's app-only tool ([AppToolEntries]).
	// The catalog takes everything else from Runs's entry (scope, schemas, invoker, PII and
	// audit facts), and the pipeline checks, invokes, audits and measures a call of the alias
	// as a call of Runs ([Catalog.Canonical]): an alias has no behaviour of its own. Only a
	// tool that is not itself an alias can be aliased, and an alias is never on REST.
	Runs string
	// View is, for a view's app-only tool, the URI of the MCP Apps view that calls it: such a
	// tool is listed to and callable by clients that declared the extension only, and never
	// shown to the model.
	View string
}

// AuditName is the capability name the audit log records for e.
func (e *Entry) AuditName() string {
	if e.AuditAs != "" {
		return e.AuditAs
	}
	return e.ID
}

// Catalog is the immutable set of capabilities a server offers, in order, and the roles of
// the scope matrix: the one place the pipeline, MCP and REST look a capability up. Reads of
// whole entries return copies; lookups of unknown ids fail closed.
type Catalog struct {
	entries []Entry
	byID    map[string]int
	byOp    map[string]int
	roles   []RoleScopes
}

// NewCatalog returns the catalog of entries (copied) with the roles of the scope matrix (nil:
// a caller can never hold more than its token's scopes). Duplicate ids or operations, an entry
// without a scope or without an invoker are errors.
func NewCatalog(roles []RoleScopes, entries ...Entry) (*Catalog, error) {
	c := &Catalog{byID: map[string]int{}, byOp: map[string]int{}}
	for _, r := range roles {
		c.roles = append(c.roles, RoleScopes{Role: r.Role, Scopes: slices.Clone(r.Scopes)})
	}
	return c.add(entries)
}

// With returns a catalog of c's entries followed by extra (upstream tools, fixtures); c is
// unchanged.
func (c *Catalog) With(extra ...Entry) (*Catalog, error) {
	n := &Catalog{entries: slices.Clone(c.entries), byID: make(map[string]int, len(c.byID)+len(extra)),
		byOp: make(map[string]int, len(c.byOp)), roles: c.roles}
	for k, v := range c.byID {
		n.byID[k] = v
	}
	for k, v := range c.byOp {
		n.byOp[k] = v
	}
	return n.add(extra)
}

func (c *Catalog) add(entries []Entry) (*Catalog, error) {
	for _, e := range entries {
		if e.Runs != "" {
			var err error
			if e, err = c.alias(e); err != nil {
				return nil, err
			}
		}
		switch {
		case e.ID == "":
			return nil, errors.New("catalog: an entry has no id")
		case e.Scope == "":
			return nil, fmt.Errorf("catalog: capability %q has no scope", e.ID)
		case e.Invoke == nil:
			return nil, fmt.Errorf("catalog: capability %q has no invoker", e.ID)
		}
		if _, dup := c.byID[e.ID]; dup {
			return nil, fmt.Errorf("catalog: capability %q is in the catalog twice", e.ID)
		}
		if e.Operation != "" {
			if prev, dup := c.byOp[e.Operation]; dup {
				return nil, fmt.Errorf("catalog: operation %q serves both %q and %q", e.Operation, c.entries[prev].ID, e.ID)
			}
			c.byOp[e.Operation] = len(c.entries)
		}
		c.byID[e.ID] = len(c.entries)
		c.entries = append(c.entries, cloneEntry(e))
	}
	return c, nil
}

// alias completes alias entry a from the entry of the tool it runs.
func (c *Catalog) alias(a Entry) (Entry, error) {
	i, ok := c.byID[a.Runs]
	switch {
	case a.ID == "":
		return Entry{}, fmt.Errorf("catalog: an alias of %q has no id", a.Runs)
	case !ok:
		return Entry{}, fmt.Errorf("catalog: %q runs %q, which is not in the catalog before it", a.ID, a.Runs)
	case c.entries[i].Kind != KindTool || c.entries[i].Runs != "":
		return Entry{}, fmt.Errorf("catalog: %q runs %q, which is not a tool of its own", a.ID, a.Runs)
	case a.Scope != "" || a.Invoke != nil || a.Operation != "" || len(a.InputSchema) > 0 || len(a.OutputSchema) > 0:
		return Entry{}, fmt.Errorf("catalog: alias %q sets what it takes from %q (scope, invoker, schemas, REST operation)", a.ID, a.Runs)
	}
	t := c.entries[i]
	out := cloneEntry(t)
	out.Capability.ID, out.Capability.Name = a.ID, a.ID
	if a.Title != "" {
		out.Title = a.Title
	}
	if a.Description != "" {
		out.Description = a.Description
	}
	out.Operation, out.AuditAs, out.Runs, out.View = "", t.AuditName(), t.ID, a.View
	return out, nil
}

func cloneEntry(e Entry) Entry {
	e.Capability = Clone(e.Capability)
	e.InputSchema = slices.Clone(e.InputSchema)
	e.OutputSchema = slices.Clone(e.OutputSchema)
	return e
}

// All returns every entry, in order.
func (c *Catalog) All() []Entry {
	out := make([]Entry, len(c.entries))
	for i, e := range c.entries {
		out[i] = cloneEntry(e)
	}
	return out
}

// Lookup returns the entry of capability id; ok is false for an unknown id.
func (c *Catalog) Lookup(id string) (Entry, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Entry{}, false
	}
	return cloneEntry(c.entries[i]), true
}

// Operation returns the entry the REST operation op serves; ok is false for none.
func (c *Catalog) Operation(op string) (Entry, bool) {
	i, ok := c.byOp[op]
	if !ok {
		return Entry{}, false
	}
	return cloneEntry(c.entries[i]), true
}

// Canonical is the id of the capability a call of id runs: the tool an alias runs, else id
// itself (unknown ids included, which every lookup then refuses).
func (c *Catalog) Canonical(id string) string {
	if i, ok := c.byID[id]; ok && c.entries[i].Runs != "" {
		return c.entries[i].Runs
	}
	return id
}

// Scope is the one scope capability id needs; ok is false for an unknown id (deny).
func (c *Catalog) Scope(id string) (string, bool) {
	i, ok := c.byID[id]
	if !ok {
		return "", false
	}
	return c.entries[i].Scope, true
}

// AuditName is the name refusals of capability id are audited under (id when unknown).
func (c *Catalog) AuditName(id string) string {
	if i, ok := c.byID[id]; ok {
		return c.entries[i].AuditName()
	}
	return id
}

// Invoke runs capability id's invoker.
func (c *Catalog) Invoke(ctx context.Context, id string, granted ScopeSet, args json.RawMessage) (any, error) {
	i, ok := c.byID[id]
	if !ok {
		return nil, fmt.Errorf("catalog: capability %q is not in the catalog", id)
	}
	return c.entries[i].Invoke(ctx, granted, args)
}

// HasRoles reports whether the catalog knows the roles of the scope matrix.
func (c *Catalog) HasRoles() bool { return c.roles != nil }

// RoleScopes returns the scopes role may ever hold; ok is false for an unknown role.
func (c *Catalog) RoleScopes(role string) (ScopeSet, bool) {
	for _, r := range c.roles {
		if r.Role == role {
			return NewScopeSet(r.Scopes...), true
		}
	}
	return ScopeSet{}, false
}

// RoleCanHold reports whether role may hold scope, without building a set.
func (c *Catalog) RoleCanHold(role, scope string) bool {
	for _, r := range c.roles {
		if r.Role == role {
			return slices.Contains(r.Scopes, scope)
		}
	}
	return false
}

// Typed is the invoker of a generated handler method: args validated against schema (compiled
// once, on first use), decoded strictly into a new I, then fn, then the output finalized
// (see [Call]).
func Typed[I any, O any, PO interface {
	*O
	Finalizer
}](id string, schema json.RawMessage, fn func(context.Context, *I) (PO, error)) Invoker {
	validator := sync.OnceValues(func() (*Validator, error) {
		if len(schema) == 0 {
			return nil, fmt.Errorf("no input schema for capability %q", id)
		}
		v, err := NewValidator(schema)
		if err != nil {
			return nil, fmt.Errorf("capability %q: %w", id, err)
		}
		return v, nil
	})
	return func(ctx context.Context, granted ScopeSet, args json.RawMessage) (any, error) {
		v, err := validator()
		if err != nil {
			return nil, err
		}
		in := new(I)
		if err := v.Decode(args, in); err != nil {
			return nil, err
		}
		return Call(ctx, id, in, fn, granted)
	}
}
