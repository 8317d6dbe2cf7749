package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// toolHandler is the engine's handler of tool e: its side of e's call (toolCall), built once
// per entry. A result the fast path already built and handed over (fastpath.go) is returned as
// it is, so the capability never runs twice.
func (h *Handler) toolHandler(e *entry) sdk.ToolHandler {
	call := h.fast.toolCallOf(h, e)
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if o, ok := handedOver(ctx, "tools/call", req.Params.Name); ok {
			return o.tool, o.err
		}
		res, _, err := call(ctx, callInvocation(req))
		return res, err
	}
}

// toolCallFunc builds the result of one tools/call. raw reports a result the capability
// returned as an *sdk.CallToolResult of its own (Options.Gate's escape hatch: upstream tools,
// fixtures), which the fast path leaves to the engine.
type toolCallFunc func(ctx context.Context, in invocation) (res *sdk.CallToolResult, raw bool, err error)

// toolCall is the glue of one tool, the one function the engine's handler and the fast path
// both call: the permit of the HTTP-level scope check, the pipeline's Invoke (validation,
// call, redaction, one encoding), result shaping (structuredContent plus the text the model
// reads, handoff fields given to the person), error mapping. The tool's handoff fields are
// found here, once per entry, so a tool without any (every read) never looks inside its JSON.
func (h *Handler) toolCall(e *entry) toolCallFunc {
	handoff := handoffFields(&e.Capability)
	_, viewed := h.viewFor(e)
	viewed = viewed || e.appView != nil
	return func(ctx context.Context, in invocation) (*sdk.CallToolResult, bool, error) {
		permit, ok := pipeline.PermitFrom(ctx, e.ID)
		if !ok { // serveMCP authorizes every tools/call before the SDK sees it; fail closed
			return nil, false, h.internal(ctx, e, errors.New("tools/call reached the handler without a permit"))
		}
		args := in.args
		if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		ctx = withCall(ctx, in.call(h, "tools/call", args))
		res, err := h.opts.Gate.Invoke(ctx, permit, args)
		if err != nil {
			r, err := h.toolError(ctx, e, err)
			return r, false, err
		}
		if raw, ok := res.Value.(*sdk.CallToolResult); ok {
			return raw, true, nil
		}
		if len(handoff) > 0 {
			r, err := h.handoffResult(ctx, e, in, handoff, viewed, res)
			return r, false, err
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: h.resultText(ctx, e, res.Value, res.JSON, true, "")}},
			StructuredContent: res.JSON,
		}, false, nil
	}
}

// resultText is a tool result's text content, what most hosts hand the model: the
// capability's summary sentence, the handoff paragraph (handoffText; "" for none), then the
// output rendered for a model (capability.RenderText: lines and tables, not JSON, without the
// ids the spec keeps out of the text), separated by blank lines. structuredContent keeps the
// JSON for programs and views. Output that fails to render (it cannot: the pipeline encoded
// it) is logged and sent as its JSON. value is the typed output; encoded says data is its
// encoding as it is (not a handoff result's JSON, which leaves fields out), so the text is
// rendered from value's fields (capability.AppendTextOf) instead of parsing data.
func (h *Handler) resultText(ctx context.Context, e *entry, value any, data json.RawMessage, encoded bool, handoff string) string {
	const sep = "\n\n"
	text := make([]byte, 0, summaryRoom+len(handoff)+2*len(sep)+capability.TextSizeHint(data))
	text = h.appendSummary(ctx, e, text, value, data)
	if handoff != "" {
		if len(text) > 0 {
			text = append(text, sep...)
		}
		text = append(text, handoff...)
	}
	head := len(text)
	if head > 0 {
		text = append(text, sep...)
	}
	var withBody []byte
	var err error
	if encoded {
		withBody, err = capability.AppendTextOf(text, value, data, e.NotInText)
	} else {
		withBody, err = capability.AppendText(text, data, e.NotInText)
	}
	if err != nil {
		h.log.WarnContext(ctx, "tool result text not rendered", "capability", e.ID, "error", err)
		withBody = append(text, data...)
	}
	if len(withBody) == len(text) { // nothing rendered: no separator either
		withBody = withBody[:head]
	}
	// The bytes are this call's own and never written again: the string shares them rather
	// than copying a busy Sunday's 15 KB (strings.Builder does the same).
	return unsafe.String(unsafe.SliceData(withBody), len(withBody))
}

// summaryRoom is what resultText's buffer keeps for the summary sentence: a longer one
// grows it once.
const summaryRoom = 256

// appendSummary appends the capability's summary sentence of a result to dst, nothing
// without one. It runs on the finalized output, after redaction, so it shows nothing
// structuredContent does not (summaries never name personal data, the generator checks). A
// summary that fails to render is logged and left out: the JSON still answers. value is the
// typed output data encodes; the summary reads its fields instead of decoding data
// (capability.AppendSummaryOf).
func (h *Handler) appendSummary(ctx context.Context, e *entry, dst []byte, value any, data json.RawMessage) []byte {
	if e.summary == nil {
		return dst
	}
	b, err := capability.AppendSummaryOf(dst, e.summary, value, data)
	if err != nil || len(b) == len(dst) {
		h.log.WarnContext(ctx, "tool summary not rendered", "capability", e.ID, "error", err)
		return dst
	}
	return b
}

// Handoff fields (FieldRule.Handoff): a secret the server gives out for a person, such as the
// pick-up code a guardian must present, not for the model that called the tool. Over MCP it
// never goes to structuredContent or to the JSON of the text. A client that declared MCP Apps
// gets the values in the result's _meta[handoffMetaKey], for the view to show (hosts do not
// give _meta to the model), and the text says only that a value was issued; any other client
// gets each value once in the text, with the spec's note telling the model to pass it on.
// REST answers the JSON as it is.

// handoffMetaKey is the result _meta key holding the handed-off values, by JSON name.
const handoffMetaKey = "neemias/handoff"

// handoffField is a top-level output field whose value is handed off: its JSON name and the
// note shown with it.
type handoffField struct{ name, note string }

// handoffValue is what one handoff field held in a result.
type handoffValue struct {
	handoffField
	value string
}

// handoffFields are c's handoff fields, in spec order; nil for almost every capability. The
// generator allows handoff on optional top-level string outputs only, so a rule's path is the
// field's JSON name.
func handoffFields(c *capability.Capability) []handoffField {
	var out []handoffField
	for _, r := range c.OutputPII {
		if r.Handoff != "" {
			out = append(out, handoffField{name: r.Path, note: r.Handoff})
		}
	}
	return out
}

// handoffResult is the result of a tool with handoff fields: takeHandoffs' JSON as
// structuredContent and text, the values in _meta for a client with MCP Apps or in the text for
// any other. viewed says the tool's results are shown in a view (it is linked to one, or is a
// view's app-only tool): without one an MCP Apps host renders nothing of _meta, so the values
// go to the text as for any other client rather than to no one. A result that holds none of
// them (a retry returns no new pick-up code) is the plain one. The JSON failing to split is an
// internal error: the values are never let through.
func (h *Handler) handoffResult(ctx context.Context, e *entry, in invocation, fields []handoffField, viewed bool, res pipeline.Result) (*sdk.CallToolResult, error) {
	data, values, err := takeHandoffs(res.JSON, fields)
	if err != nil {
		return nil, h.internal(ctx, e, fmt.Errorf("removing the handoff fields of %q: %w", e.ID, err))
	}
	ui := len(values) > 0 && viewed && wantsUI(ctx, in.clientCaps)
	out := &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: h.resultText(ctx, e, res.Value, data, false, handoffText(values, ui))}},
		StructuredContent: data,
	}
	if ui {
		out.Meta = handoffMeta(values)
	}
	return out, nil
}

// handoffMeta is the result _meta of handed-off values, for the view: {handoffMetaKey: {name:
// value}}.
func handoffMeta(values []handoffValue) sdk.Meta {
	m := make(map[string]string, len(values))
	for _, v := range values {
		m[v.name] = v.value
	}
	return sdk.Meta{handoffMetaKey: m}
}

// handoffText is what the text says of the handed-off values: with MCP Apps, only that each was
// issued (the view shows it); otherwise each value once, with its note. "" for none.
func handoffText(values []handoffValue, ui bool) string {
	parts := make([]string, len(values))
	for i, v := range values {
		if ui {
			parts[i] = handoffIssued(v.name)
		} else {
			parts[i] = fmt.Sprintf("%s: %s. %s", v.name, v.value, v.note)
		}
	}
	return strings.Join(parts, " ")
}

// handoffIssued is what the model reads of a value handed to the person through the view.
func handoffIssued(name string) string {
	return fmt.Sprintf("A %s was issued: it is shown to the person in the app view, not in this conversation.", name)
}

// takeHandoffs returns data, a JSON object, without the members named by fields, and the
// string values those held (a member that is absent or null holds none). The other members
// keep their order and their bytes, so the JSON reads as the pipeline encoded it; data with
// none of them, or anything but an object, is returned as it is.
func takeHandoffs(data json.RawMessage, fields []handoffField) (json.RawMessage, []handoffValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return data, nil, nil
	}
	var values []handoffValue
	removed := false
	out := make([]byte, 0, len(data))
	out = append(out, '{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("reading a member name: %w", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("reading member %q: %w", key, err)
		}
		if f, ok := findHandoff(fields, key); ok {
			removed = true
			if string(raw) != "null" {
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					return nil, nil, fmt.Errorf("member %q is not a string: %w", key, err)
				}
				values = append(values, handoffValue{handoffField: f, value: s})
			}
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(key) // a string always marshals
		out = append(append(append(out, name...), ':'), raw...)
	}
	if !removed {
		return data, nil, nil
	}
	return append(out, '}'), values, nil
}

// findHandoff returns the field of fields named name.
func findHandoff(fields []handoffField, name string) (handoffField, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return handoffField{}, false
}

// invalidArgs is the text of an isError result for bad arguments: the field and what the
// caller reads of the reason (errs.Shown: the reason and its detail, which logs never get).
func invalidArgs(tool, field, shown string) string {
	if field == "" {
		return fmt.Sprintf("invalid arguments for %q: %s. Fix the arguments and call the tool again.", tool, shown)
	}
	return fmt.Sprintf("invalid arguments for %q: %s: %s. Fix the arguments and call the tool again.", tool, field, shown)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of strings
	}
	return b
}
