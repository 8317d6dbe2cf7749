package server_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestReadToolsMatchTheirResources: on the assembled server, each read tool answers exactly what
// its resource answers, for the same caller (row filters and redaction included), in both eras;
// child records (children:read) are outside a guardian's role: its read tool is unknown to them.
func TestReadToolsMatchTheirResources(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	volKid := a.freeChildren(t, 1, true)[0]
	ownKid := a.query(t, `SELECT gc.child_id::text FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		WHERE g.user_id = $1 ORDER BY 1 LIMIT 1`, seed.DemoResponsavelID)[0]
	day := a.one(t, `SELECT service_date::text FROM checkins GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`)
	cases := []struct {
		user demoUser
		tool string
		args map[string]any
		uri  string
	}{
		{admin, "neemias_roster_children", map[string]any{}, "neemias://roster/children"},
		{cadastro, "neemias_roster_child", map[string]any{"id": volKid}, "neemias://roster/children/" + volKid},
		{admin, "neemias_roster_child", map[string]any{"id": ownKid}, "neemias://roster/children/" + ownKid},
		{voluntario, "neemias_checkins_by_date", map[string]any{"date": day}, "neemias://checkins/" + day},
		{responsavel, "neemias_checkins_by_date", map[string]any{"date": day}, "neemias://checkins/" + day},
		{admin, "neemias_attendance_summary", map[string]any{"from": day, "to": day}, "neemias://attendance/summary?from=" + day + "&to=" + day},
	}
	for _, version := range eras {
		for _, tc := range cases {
			t.Run(version+"/"+tc.user.role+"/"+tc.tool, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, _ := a.connect(t, ctx, version, a.token(t, tc.user))
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", tc.tool, err, res)
				}
				var viaTool any
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &viaTool)
				viaRead := readJSON(t, cs, tc.uri)
				if !reflect.DeepEqual(viaTool, any(viaRead)) {
					t.Errorf("tool and resource differ:\n tool %s\n read %v", b, viaRead)
				}
			})
		}
	}
	t.Run("a child record as a guardian", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, responsavel))
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_roster_child", Arguments: map[string]any{"id": ownKid}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("got %v, want unknown tool (children:read is for ADMIN and CADASTRO only)", err)
		}
	})
}
