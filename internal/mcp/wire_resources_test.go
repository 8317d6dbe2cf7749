package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// resources/read: strict URI parsing (security checklist I09, I10), per-era not-found codes,
// cache hints, and only the caller's resources listed.
func TestResourceURIs(t *testing.T) {
	srv := newTestServer(t)
	notFound := []string{
		"neemias://roster/children/..",
		"neemias://roster/children/..%2F..%2Fadmin",
		"neemias://roster/children/%252e%252e",
		"neemias://roster/children/",
		"neemias://roster/children/" + childA + "/",
		"NEEMIAS://roster/children/" + childA,
		"neemias://roster/children/" + childA + "#frag",
		"neemias://roster/children/" + childA + "?id=1",
		"neemias://roster/children/%33f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60",
		"neemias://roster/children/00000000-0000-4000-8000-000000000000", // well-formed, absent
		"file:///etc/passwd",
		"neemias://attendance/summary?",
		"neemias://attendance/summary?from=2026-06-01&from=2026-06-02",
		"neemias://attendance/summary?role=admin",
	}
	for _, uri := range notFound {
		t.Run("legacy "+uri, func(t *testing.T) {
			ex := post(t, srv, nil, rpc(1, "resources/read", map[string]any{"uri": uri}))
			if ex.status != 200 || ex.errorCode() != -32002 {
				t.Fatalf("got %d/%v, want 200/-32002; body %.300s", ex.status, ex.errorCode(), ex.body)
			}
		})
		t.Run("modern "+uri, func(t *testing.T) {
			ex := modern(t, srv, nil, "resources/read", map[string]any{"uri": uri})
			if ex.status != 400 || ex.errorCode() != -32602 || ex.errorMessage() != "Resource not found" {
				t.Fatalf("got %d/%v %q, want 400/-32602; body %.300s", ex.status, ex.errorCode(), ex.errorMessage(), ex.body)
			}
		})
	}
	invalid := map[string]string{
		"neemias://roster/children/not-a-uuid":                       "id: must be a UUID",
		"neemias://attendance/summary?from=2026-02-30":               "from: must be a date in the form YYYY-MM-DD",
		"neemias://attendance/summary?from=2026-07-01&to=2026-06-01": "from: must not be after to",
	}
	for uri, want := range invalid {
		t.Run("invalid "+uri, func(t *testing.T) {
			ex := modern(t, srv, nil, "resources/read", map[string]any{"uri": uri})
			if ex.errorCode() != -32602 || !strings.Contains(ex.errorMessage(), want) {
				t.Fatalf("got %v %q, want -32602 containing %q", ex.errorCode(), ex.errorMessage(), want)
			}
		})
	}
}

func TestResourceRead(t *testing.T) {
	srv := newTestServer(t)
	uri := "neemias://roster/children/" + childA
	ex := modern(t, srv, nil, "resources/read", map[string]any{"uri": uri})
	r := ex.result()
	if r == nil {
		t.Fatalf("no result: %s", ex.body)
	}
	if r["cacheScope"] != "private" || r["ttlMs"] != float64(30000) || r["resultType"] != "complete" {
		t.Errorf("cache hints/resultType: %v", r)
	}
	contents, _ := r["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("contents: %v", r["contents"])
	}
	c := contents[0].(map[string]any)
	var data map[string]any
	if c["uri"] != uri || c["mimeType"] != "application/json" || json.Unmarshal([]byte(c["text"].(string)), &data) != nil || data["child_id"] != childA {
		t.Errorf("content: %v", c)
	}
	q := modern(t, srv, nil, "resources/read", map[string]any{"uri": "neemias://attendance/summary?from=2026-06-01&class_id=" + classA})
	if q.result() == nil {
		t.Errorf("query template read: %s", q.body)
	}
}

func TestResourceListsFollowScopes(t *testing.T) {
	srv := newTestServer(t)
	names := func(tok, method, key, field string) []string {
		ex := modern(t, srv, map[string]string{"Authorization": "Bearer " + tok}, method, nil)
		var out []string
		items, _ := ex.result()[key].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any)[field].(string))
		}
		return out
	}
	if got := names(tokAdmin, "resources/templates/list", "resourceTemplates", "uriTemplate"); len(got) != 2 {
		t.Errorf("admin templates = %v", got)
	}
	if got := names(tokVol, "resources/templates/list", "resourceTemplates", "uriTemplate"); strings.Join(got, ",") != "neemias://attendance/summary{?from,to,class_id}" {
		t.Errorf("volunteer templates = %v (children:read template must be hidden)", got)
	}
	if got := names(tokNone, "resources/list", "resources", "uri"); len(got) != 0 {
		t.Errorf("scope-less caller sees %v", got)
	}
}
