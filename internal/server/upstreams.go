package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/pii"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/reqid"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// upstreamTools are the tools of the governed upstream MCP servers (issue 11) the server
// offers: those the spec declares (gen/capapi.UpstreamTools) of the upstreams that are on
// and have a URL. The zero value (upstreams off) offers nothing and opens no connection.
type upstreamTools struct {
	client *upstream.Client
	loader *pii.Loader // the church's known personal values the client scans for
	order  []capability.UpstreamTool
	// listed are the upstream's own descriptions of the offered tools (by Neemias tool
	// name), read at startup: their input schemas and hints are what tools/list shows. A
	// tool of an upstream unreachable at startup is absent (plain schema, openWorld only).
	listed map[string]*sdk.Tool
}

// openSchema is the input schema tools/list shows for an upstream tool whose upstream was
// unreachable at startup: ours only says the arguments are an object. The schema is the
// upstream's to enforce either way.
var openSchema = json.RawMessage(`{"type":"object"}`)

// listTimeout bounds reading the upstreams' tools at startup: an upstream that does not
// answer by then is listed with openSchema, and the server starts.
const listTimeout = 5 * time.Second

// reconcileUpstreams checks the runtime configuration against the spec: an upstream
// configured at runtime but not declared in the spec is an error, as is a runtime tool the
// spec does not declare or a PII policy looser than the spec's (tightenOnly); a spec upstream
// without a URL is left out (and logged). It returns the configuration with each upstream's
// tools and policy taken from the spec (narrowed or tightened at runtime), and the tools
// offered.
func reconcileUpstreams(cfg upstream.Config, declared []capability.UpstreamTool, log *slog.Logger) (upstream.Config, []capability.UpstreamTool, error) {
	if !cfg.Enabled {
		return upstream.Config{}, nil, nil
	}
	byUpstream := map[string][]capability.UpstreamTool{}
	var ids []string
	for _, t := range declared {
		if _, ok := byUpstream[t.Upstream]; !ok {
			ids = append(ids, t.Upstream)
		}
		byUpstream[t.Upstream] = append(byUpstream[t.Upstream], t)
	}
	out := cfg
	out.Upstreams = nil
	configured := map[string]bool{}
	var offered []capability.UpstreamTool
	for _, u := range cfg.Upstreams {
		spec, ok := byUpstream[u.ID]
		if !ok {
			return upstream.Config{}, nil, fmt.Errorf("upstream %q is configured (--upstream %s=…) but spec/capabilities.yaml declares no such upstream (it declares: %v); declare it under upstreams: with its tools and scopes, or remove it",
				u.ID, u.ID, ids)
		}
		var names []string
		for _, t := range spec {
			names = append(names, t.Tool)
		}
		for _, t := range u.Tools {
			if !slices.Contains(names, t) {
				return upstream.Config{}, nil, fmt.Errorf("--upstream-tools %s: tool %q is not declared for upstream %q in spec/capabilities.yaml (it declares: %v); declare it there with its scope",
					u.ID, t, u.ID, names)
			}
		}
		exposed := names
		if len(u.Tools) > 0 {
			exposed = u.Tools // the operator may narrow the spec's list, never widen it
		}
		pol, err := tightenOnly(u.ID, u.PII, upstream.Policy{Request: upstream.Mode(spec[0].PIIRequest), Response: upstream.Mode(spec[0].PIIResponse)}, log)
		if err != nil {
			return upstream.Config{}, nil, err
		}
		u.Tools, u.PII = exposed, pol
		out.Upstreams = append(out.Upstreams, u)
		configured[u.ID] = true
		for _, t := range spec {
			if slices.Contains(exposed, t.Tool) {
				offered = append(offered, t)
			}
		}
	}
	for _, id := range ids {
		if !configured[id] {
			log.Info("upstream declared in the spec has no URL: its tools are not offered", "upstream", id, "flag", "--upstream "+id+"=URL")
		}
	}
	return out, offered, nil
}

// tightenOnly is the personal-data policy of upstream id: the spec's, made stricter in a
// direction where the runtime (--upstream-pii) asks for enforce over the spec's redact. The
// runtime may tighten the policy without a rebuild (an operator reacting to an upstream that
// leaks), never loosen it: redact where the spec says enforce would let data through that
// the reviewed spec refuses, so it is a start-up error naming the upstream, the direction and
// the spec's value. An empty runtime mode keeps the spec's.
func tightenOnly(id string, runtime, spec upstream.Policy, log *slog.Logger) (upstream.Policy, error) {
	out := spec
	for _, d := range []struct {
		dir           upstream.Direction
		got, specMode upstream.Mode
		set           *upstream.Mode
	}{
		{upstream.DirRequest, runtime.Request, spec.Request, &out.Request},
		{upstream.DirResponse, runtime.Response, spec.Response, &out.Response},
	} {
		switch {
		case d.got == "" || d.got == d.specMode:
		case d.got != upstream.Enforce && d.got != upstream.Redact:
			return upstream.Policy{}, fmt.Errorf("--upstream-pii %s: unknown mode %s:%q (enforce or redact)", id, d.dir, d.got)
		case d.got == upstream.Enforce: // the spec redacts: refusing is stricter
			*d.set = upstream.Enforce
			log.Info("upstream personal-data policy tightened at runtime", "upstream", id, "direction", string(d.dir),
				"spec", string(d.specMode), "runtime", string(d.got))
		default:
			return upstream.Policy{}, fmt.Errorf("--upstream-pii %s: %s:%s would loosen the spec's policy for upstream %q (%s: %s in spec/capabilities.yaml upstreams.%s.pii); "+
				"the runtime may only tighten it (redact to enforce): to redact, change the spec, run make generate and rebuild",
				id, d.dir, d.got, id, d.dir, d.specMode, id)
		}
	}
	return out, nil
}

// SpecUpstreams is cfg checked against the spec's upstreams section (gen/capapi.UpstreamTools)
// and completed from it, as the server uses it: each upstream's tools and PII policy are the
// spec's. `neemias-mcp upstream check` checks what serve would offer.
func SpecUpstreams(cfg upstream.Config, log *slog.Logger) (upstream.Config, error) {
	rc, _, err := reconcileUpstreams(cfg, capapi.UpstreamTools(), log)
	return rc, err
}

// newUpstreamTools builds the governed client of cfg (nil config off: nothing).
func newUpstreamTools(ctx context.Context, cfg upstream.Config, st *store.Store, log *slog.Logger) (*upstreamTools, error) {
	rc, offered, err := reconcileUpstreams(cfg, capapi.UpstreamTools(), log)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if !rc.Enabled || len(offered) == 0 {
		return &upstreamTools{}, nil
	}
	loader := pii.NewLoader(st, pii.LoaderOptions{})
	client, err := upstream.New(rc, upstream.Options{Known: loader.ForChurch, Auditor: upstream.DBAuditor{Store: st, Logger: log}})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	u := &upstreamTools{client: client, loader: loader, order: offered,
		listed: map[string]*sdk.Tool{}}
	u.list(ctx, log)
	log.Info("upstream tools offered", "tools", len(offered))
	return u, nil
}

// list reads each upstream's tools through the governed client (listTimeout for all) and keeps
// those offered; an upstream that does not answer is logged and its tools keep the plain
// schema.
func (u *upstreamTools) list(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	for _, id := range u.client.Upstreams() {
		tools, err := u.client.Tools(ctx, id)
		if err != nil {
			log.Warn("upstream unreachable at startup: its tools are listed with a plain input schema and no hints", "upstream", id, "err", err)
			continue
		}
		for _, t := range u.order {
			if t.Upstream != id {
				continue
			}
			if lt := tools[t.Tool]; lt != nil {
				u.listed[t.Name] = lt
			} else {
				log.Warn("upstream does not offer a tool the spec declares: calls of it are refused", "upstream", id, "tool", t.Tool)
			}
		}
	}
}

// upstreamSchema is the upstream's input schema of a tool as JSON, when it is an object schema
// (`"type": "object"`, what tools/list requires); nil otherwise.
func upstreamSchema(t *sdk.Tool) json.RawMessage {
	if t == nil || t.InputSchema == nil {
		return nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m["type"] != "object" {
		return nil
	}
	stripSchemaText(m)
	if b, err = json.Marshal(m); err != nil {
		return nil
	}
	return b
}

// schemaText are the keywords of a JSON Schema that hold free text. An upstream's text is
// untrusted (the spec declares our own title and description of its tools): it is not shown to
// agents, only the structure of the arguments is.
var schemaText = []string{"title", "description", "examples", "$comment"}

// stripSchemaText removes schemaText keywords from a schema and every schema nested in it
// (properties, items, combinators, definitions), leaving property names alone.
func stripSchemaText(schema any) {
	m, ok := schema.(map[string]any)
	if !ok {
		return
	}
	for _, k := range schemaText {
		delete(m, k)
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"} {
		stripSchemaText(m[k])
	}
	for _, k := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		if sub, ok := m[k].(map[string]any); ok {
			for _, v := range sub {
				stripSchemaText(v)
			}
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if list, ok := m[k].([]any); ok {
			for _, v := range list {
				stripSchemaText(v)
			}
		}
	}
}

// annotations are our hints of an upstream tool: openWorld always (it reaches a third party);
// readOnly, idempotent and destructive as the upstream declares them, when it did.
func annotations(t *sdk.Tool) capability.Annotations {
	yes := true
	a := capability.Annotations{OpenWorld: &yes}
	if t == nil || t.Annotations == nil {
		return a
	}
	ro, idem := t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint
	a.ReadOnly, a.Idempotent = &ro, &idem
	if d := t.Annotations.DestructiveHint; d != nil {
		dv := *d
		a.Destructive = &dv
	}
	return a
}

// peopleChanged drops the church's cached known values after an enrollment committed, so a
// new child's or guardian's name is refused at once, not after the loader's TTL.
func (u *upstreamTools) peopleChanged(church uuid.UUID) {
	if u != nil && u.loader != nil {
		u.loader.Invalidate(church)
	}
}

// entries are the catalog entries of the offered tools (after the spec's own): the scope the
// spec declares, the upstream's input schema (or openSchema), audited under the upstream's
// capability name "upstream:<id>/<tool>" (what the governed client's own rows carry, so a
// filter on upstream:% also finds refused attempts; issue 26). A permitted call goes to the
// governed client; the scope check was the pipeline's, the personal-data scan, retries and the
// audit entry are the client's. A refusal or failure is a tool error the agent can read (it
// names the upstream, the detector and the JSON path, never a value) so it continues without
// the tool. Arguments that are not a JSON object never reach the client: refused is told (the
// audit row "call.invalid").
func (u *upstreamTools) entries(refused pipeline.RefusalHook) []capability.Entry {
	var out []capability.Entry
	for _, t := range u.order {
		schema := upstreamSchema(u.listed[t.Name])
		if schema == nil {
			schema = openSchema
		}
		out = append(out, capability.Entry{
			Capability: capability.Capability{
				ID: t.Name, Name: t.Name, Kind: capability.KindTool, Title: t.Title, Description: t.Description,
				Scope: t.Scope, Annotations: annotations(u.listed[t.Name]), RowFilters: []string{},
				Audit: capability.Audit{Action: "call", Always: true, IDInputs: []string{}}, Source: t.Source,
			},
			InputSchema: schema,
			AuditAs:     upstream.CapabilityName(t.Upstream, t.Tool),
			Invoke:      u.invoker(t, refused),
		})
	}
	return out
}

// invoker is the call of upstream tool t through the governed client.
func (u *upstreamTools) invoker(t capability.UpstreamTool, refused pipeline.RefusalHook) capability.Invoker {
	return func(ctx context.Context, _ capability.ScopeSet, args json.RawMessage) (any, error) {
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil || m == nil {
			bad := errs.Invalidf("", "the arguments must be a JSON object")
			if refused != nil {
				refused(ctx, upstream.CapabilityName(t.Upstream, t.Tool), nil, bad)
			}
			return nil, bad
		}
		c, ok := principal.From(ctx)
		if !ok { // the pipeline permitted the call, so a caller is on ctx; fail closed all the same
			return nil, errs.ErrUnauthenticated
		}
		res, err := u.client.CallTool(ctx, upstream.Caller{ChurchID: c.ChurchID, UserID: c.UserID, Role: c.Role,
			ClientID: c.ClientID, CorrelationID: reqid.From(ctx)}, t.Upstream, t.Tool, m)
		var ue *upstream.Error
		switch {
		case errors.As(err, &ue):
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: ue.Error()}}}, nil
		case err != nil:
			return nil, err
		}
		return res, nil
	}
}

// CloseUpstreams closes the sessions of the governed upstream client, if any.
func (s *Server) CloseUpstreams() error { return s.upstreams.Close() }

// Close closes the upstream sessions.
func (u *upstreamTools) Close() error {
	if u == nil || u.client == nil {
		return nil
	}
	return u.client.Close()
}
