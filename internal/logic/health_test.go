package logic_test

import (
	"context"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// asWithout is c.as(role) with one scope of the role taken away (a token that was not
// granted it).
func (c church) asWithout(role, scope string) context.Context {
	held, _ := scopes.RoleScopes(role)
	var keep []string
	for _, s := range held.List() {
		if s != scope {
			keep = append(keep, s)
		}
	}
	return principal.With(context.Background(), principal.Principal{
		UserID: c.users[role], ChurchID: c.id, Role: role, Scopes: capability.NewScopeSet(keep...), ClientID: "test-client",
	})
}

// TestAlertsAtTheDoor (issue 21): allergies and medical notes, taken at enrollment, reach the
// volunteer of the child's class on the class list and at check-in, and staff; a token
// without health:read and a guardian get neither; a phone or CPF typed into them is refused
// naming the field, with nothing written; the text never reaches a log line.
func TestAlertsAtTheDoor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	const allergy, notes = "Zzalergia amendoim e dipirona", "Zzasma: bombinha na mochila"
	cad := a.as(store.RoleCadastro)
	args := enrollArgs(todaySP().AddDays(-3 * 365).String()) // class c1, the volunteer's
	args["allergies"], args["medical_notes"] = allergy, notes
	kid := mustInvoke[capapi.ChildEnrollOutput](e, cad, capapi.CapChildEnroll, args)

	for _, bad := range []struct{ field, text string }{
		{"allergies", "amendoim; ligar 11 98765-4321"},
		{"medical_notes", "CPF da mãe 123.456.789-09"},
	} {
		m := enrollArgs(todaySP().AddDays(-3 * 365).String())
		m["name"] = "Zzoutra Criança Alerta"
		m[bad.field] = bad.text
		_, err := e.invoke(cad, capapi.CapChildEnroll, m)
		wantInvalid(t, err, bad.field)
		if n := e.count(`SELECT count(*) FROM children WHERE name = 'Zzoutra Criança Alerta'`); n != 0 {
			t.Errorf("%s: a refused enrollment wrote %d children", bad.field, n)
		}
	}

	find := func(ctx context.Context) *capapi.ClassListOutputClassesItemChildrenItem {
		t.Helper()
		out := mustInvoke[capapi.ClassListOutput](e, ctx, capapi.CapClassList, map[string]any{})
		for _, cl := range out.Classes {
			for i := range cl.Children {
				if cl.Children[i].Allergies != nil || cl.Children[i].MedicalNotes != nil {
					return &cl.Children[i]
				}
			}
		}
		return nil
	}
	vol := a.as(store.RoleVoluntario)
	if c := find(vol); c == nil || *c.Allergies != allergy || *c.MedicalNotes != notes {
		t.Fatalf("the volunteer's class list: %+v; want the alerts", c)
	}
	if c := find(a.asWithout(store.RoleVoluntario, "health:read")); c != nil {
		t.Errorf("without health:read the class list carries alerts: %+v", c)
	}
	if c := find(a.as(store.RoleAdmin)); c == nil {
		t.Errorf("ADMIN's class list lacks the alerts")
	}
	// At check-in, by the volunteer.
	in := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child_id": kid.ChildID.String()})
	if in.Allergies == nil || *in.Allergies != allergy || in.MedicalNotes == nil {
		t.Errorf("check-in output: %+v; want the alerts", in.LogValue())
	}
	// A guardian never holds health:read.
	if held, _ := scopes.RoleScopes(store.RoleResponsavel); held.Has("health:read") {
		t.Errorf("RESPONSAVEL holds health:read")
	}
	e.neverShown("Zzalergia", "Zzasma")
}
