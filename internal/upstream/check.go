package upstream

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ToolStatus is one tool in a [Report].
type ToolStatus struct {
	Name string
	// Exposed: allowlisted and offered by the upstream.
	Exposed bool
	// Why it is not exposed: "not allowlisted" (offered, not in the configuration) or "not
	// offered by the upstream" (configured, missing from tools/list).
	Refused    string
	ReadOnly   bool
	Idempotent bool
}

// Report is what [Client.Check] found for one upstream.
type Report struct {
	Upstream string
	URL      string
	// Err is why the upstream could not be listed (it names no address).
	Err   string
	Tools []ToolStatus
}

// Check connects to each configured upstream, lists its tools and reports which are exposed
// and which are refused and why. With the flag off it returns ErrDisabled and connects to
// nothing.
func (c *Client) Check(ctx context.Context) ([]Report, error) {
	if !c.enabled {
		return nil, ErrDisabled
	}
	var out []Report
	for _, id := range c.order {
		r := c.ups[id]
		rep := Report{Upstream: id, URL: r.cfg.URL}
		cctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
		_, tools, err := c.session(cctx, r)
		cancel()
		if err != nil {
			rep.Err = describe(err)
			for _, t := range r.cfg.Tools {
				rep.Tools = append(rep.Tools, ToolStatus{Name: t, Refused: "upstream unreachable"})
			}
			out = append(out, rep)
			continue
		}
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		for _, t := range r.cfg.Tools {
			if tools[t] == nil {
				names = append(names, t)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			st := ToolStatus{Name: n}
			t := tools[n]
			if t != nil && t.Annotations != nil {
				st.ReadOnly, st.Idempotent = t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint
			}
			switch {
			case t == nil:
				st.Refused = "not offered by the upstream"
			case !r.exposed[n]:
				st.Refused = "not allowlisted"
			default:
				st.Exposed = true
			}
			rep.Tools = append(rep.Tools, st)
		}
		out = append(out, rep)
	}
	return out, nil
}

// WriteReports prints reports for an operator.
func WriteReports(w io.Writer, reps []Report) {
	for _, r := range reps {
		fmt.Fprintf(w, "upstream %s (%s)\n", r.Upstream, r.URL)
		if r.Err != "" {
			fmt.Fprintf(w, "  unreachable: %s\n", r.Err)
		}
		for _, t := range r.Tools {
			var hints []string
			if t.ReadOnly {
				hints = append(hints, "readOnly")
			}
			if t.Idempotent {
				hints = append(hints, "idempotent")
			}
			retry := "no retry"
			if len(hints) > 0 {
				retry = "retried (" + strings.Join(hints, ", ") + ")"
			}
			if t.Exposed {
				fmt.Fprintf(w, "  exposed  %-40s %s\n", t.Name, retry)
			} else {
				fmt.Fprintf(w, "  refused  %-40s %s\n", t.Name, t.Refused)
			}
		}
	}
}
