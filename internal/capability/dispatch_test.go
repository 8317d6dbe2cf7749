package capability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// recorder is a test double of the generated Handler: it records the decoded input and returns
// canned outputs that contain personal data, so redaction can be observed.
// recorder fakes the capabilities these tests exercise; the generated UnimplementedHandler
// answers the rest, so a capability added to the spec does not break this file.
type recorder struct {
	capapi.UnimplementedHandler
	last any
}

var (
	childID    = uuid.MustParse("11111111-1111-4111-8111-111111111111")
	guardianID = uuid.MustParse("22222222-2222-4222-8222-222222222222")
	phone      = "+55 11 99999-0000"
	childName  = "Sentinela Canario da Silva"
)

func (r *recorder) RosterChildren(_ context.Context, in *capapi.RosterChildrenInput) (*capapi.RosterChildrenOutput, error) {
	r.last = in
	return &capapi.RosterChildrenOutput{TotalChildren: 3}, nil
}

func (r *recorder) RosterChild(_ context.Context, in *capapi.RosterChildInput) (*capapi.RosterChildOutput, error) {
	r.last = in
	if in.ID != childID {
		return nil, errs.ErrNotFound
	}
	return &capapi.RosterChildOutput{
		ChildID: childID, Name: childName, BirthDate: capability.NewDate(2019, 5, 1),
		Guardians: []capapi.RosterChildOutputGuardiansItem{{GuardianID: guardianID, Name: "Guardiã", Relationship: "mother", Phone: &phone}},
	}, nil
}

func (r *recorder) AttendanceSummary(_ context.Context, in *capapi.AttendanceSummaryInput) (*capapi.AttendanceSummaryOutput, error) {
	r.last = in
	return &capapi.AttendanceSummaryOutput{}, nil
}

func (r *recorder) CheckinsByDate(_ context.Context, in *capapi.CheckinsByDateInput) (*capapi.CheckinsByDateOutput, error) {
	r.last = in
	return &capapi.CheckinsByDateOutput{Date: in.Date, Total: 1, Classes: []capapi.CheckinsByDateOutputClassesItem{{ClassName: "Maternal", Checkins: []capapi.CheckinsByDateOutputClassesItemCheckinsItem{{ChildHandle: "H4NDL3", ChildLabel: childName}}}}}, nil
}

func (r *recorder) CheckinRegister(_ context.Context, in *capapi.CheckinRegisterInput) (*capapi.CheckinRegisterOutput, error) {
	r.last = in
	return nil, nil // a buggy handler: neither output nor error
}

func (r *recorder) CheckoutRegister(_ context.Context, in *capapi.CheckoutRegisterInput) (*capapi.CheckoutRegisterOutput, error) {
	r.last = in
	return nil, errors.New("boom: SELECT * FROM children WHERE name = 'x'")
}

func (r *recorder) ChildEnroll(_ context.Context, in *capapi.ChildEnrollInput) (*capapi.ChildEnrollOutput, error) {
	r.last = in
	return &capapi.ChildEnrollOutput{ChildID: childID}, nil
}

func (r *recorder) Complete(context.Context, string, string, string) ([]string, error) {
	return nil, nil
}

var _ capapi.Handler = (*recorder)(nil)

// invoke runs capability id through the pipeline the transports use (the generated catalog,
// its typed invokers over h) for a caller holding granted.
func invoke(h capapi.Handler, id string, args json.RawMessage, granted capability.ScopeSet) (any, error) {
	gate, err := pipeline.New(pipeline.Config{Catalog: capapi.Catalog(h)})
	if err != nil {
		return nil, err
	}
	ctx := principal.With(context.Background(), principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: granted})
	res, err := gate.Call(ctx, id, args)
	return res.Value, err
}

func all() capability.ScopeSet {
	return capability.NewScopeSet("roster:read", "attendance:read", "checkins:read", "checkins:write", "children:read", "children:write", "guardians:read")
}

func TestInvokeChecksScopeFirst(t *testing.T) {
	r := &recorder{}
	_, err := invoke(r, capapi.CapRosterChild, json.RawMessage(`{"id":"`+childID.String()+`"}`), capability.NewScopeSet("roster:read"))
	var f *errs.Forbidden
	if !errors.As(err, &f) || f.Scope != "children:read" {
		t.Fatalf("err = %v, want Forbidden children:read", err)
	}
	if r.last != nil {
		t.Fatal("handler was called without the scope")
	}
	if _, err := invoke(r, "no_such_capability", nil, all()); err == nil {
		t.Fatal("unknown capability must be denied")
	}
}

func TestInvokeRejectsBadInputWithoutEchoingIt(t *testing.T) {
	enroll := func(mut string) string {
		base := `{"name":"` + childName + `","birth_date":"2019-05-01","guardian":{"name":"Mae Sentinela","phone":"` + phone + `","relationship":"mother"},"consent":{"granted":true,"text_version":"v1","legal_basis":"consent"}}`
		if mut == "" {
			return base
		}
		return mut
	}
	tests := []struct {
		name, id, args, field, reason string
	}{
		{"missing required", capapi.CapRosterChild, `{}`, "id", "is required"},
		{"bad uuid", capapi.CapRosterChild, `{"id":"../etc"}`, "id", "must be a UUID"},
		{"unknown field", capapi.CapRosterChild, `{"id":"` + childID.String() + `","x":1}`, "x", "is not a known field; known fields: id"},
		{"no args expected", capapi.CapRosterChildren, `{"x":1}`, "x", "takes no arguments"},
		{"not an object", capapi.CapRosterChild, `[1]`, "(arguments)", "must be a JSON object"},
		{"bad date", capapi.CapCheckinsByDate, `{"date":"2026-02-30"}`, "date", "must be a date in the form YYYY-MM-DD"},
		{"wrong type", capapi.CapCheckinsByDate, `{"date":20260201}`, "date", "must be a string, got integer"},
		{"enum", capapi.CapChildEnroll, strings.Replace(enroll(""), `"mother"`, `"aunt"`, 1), "guardian.relationship", "must be one of: mother, father, grandparent, legal_guardian, other"},
		{"pattern on a phone", capapi.CapChildEnroll, strings.Replace(enroll(""), phone, "call me", 1), "guardian.phone", "has the wrong form"},
		{"too short name", capapi.CapChildEnroll, strings.Replace(enroll(""), childName, "S", 1), "name", "must be at least 2 characters long"},
		{"nested required", capapi.CapChildEnroll, strings.Replace(enroll(""), `"granted":true,`, ``, 1), "consent.granted", "is required"},
		{"invalid JSON", capapi.CapRosterChild, `{"id":`, "", "not valid JSON"},
		{"NUL byte in a name", capapi.CapChildEnroll, strings.Replace(enroll(""), childName, `Ana\u0000Maria`, 1), "name", "must not contain NUL characters"},
		{"SQL metacharacters in an id", capapi.CapRosterChild, `{"id":"1' OR '1'='1"}`, "id", "must be a UUID"},
		{"mass assignment of church_id", capapi.CapCheckinRegister, `{"child_id":"` + childID.String() + `","church_id":"` + childID.String() + `"}`, "church_id", "is not a known field"},
		{"huge name", capapi.CapChildEnroll, strings.Replace(enroll(""), childName, strings.Repeat("a", 1<<20), 1), "name", "must be at most 120 characters long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := invoke(&recorder{}, tt.id, json.RawMessage(tt.args), all())
			inv, ok := errs.AsInvalid(err)
			if !ok {
				t.Fatalf("err = %v, want *errs.Invalid", err)
			}
			if inv.Field != tt.field || !strings.Contains(inv.Reason, tt.reason) {
				t.Errorf("got field %q reason %q; want field %q reason containing %q", inv.Field, inv.Reason, tt.field, tt.reason)
			}
			for _, secret := range []string{childName, phone, "call me", "Mae Sentinela"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error message leaks %q: %v", secret, err)
				}
			}
		})
	}
}

func TestInvokeRedactsByScope(t *testing.T) {
	args := json.RawMessage(`{"id":"` + childID.String() + `"}`)
	out, err := invoke(&recorder{}, capapi.CapRosterChild, args, capability.NewScopeSet("children:read"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), phone) || strings.Contains(string(b), `"phone"`) {
		t.Errorf("phone returned without guardians:read: %s", b)
	}
	out, err = invoke(&recorder{}, capapi.CapRosterChild, args, capability.NewScopeSet("children:read", "guardians:read"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); !strings.Contains(string(b), phone) {
		t.Errorf("phone missing with guardians:read: %s", b)
	}
	out, err = invoke(&recorder{}, capapi.CapCheckinsByDate, json.RawMessage(`{"date":"2026-06-07"}`), capability.NewScopeSet("checkins:read"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); strings.Contains(string(b), childName) {
		t.Errorf("child name returned without children:read: %s", b)
	}
}

func TestInvokeNormalisesAndGuards(t *testing.T) {
	out, err := invoke(&recorder{}, capapi.CapRosterChildren, nil, all())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `"classes":[]`) || !strings.Contains(string(b), `"age_groups":[]`) {
		t.Errorf("required lists must be [] not null: %s", b)
	}
	_, err = invoke(&recorder{}, capapi.CapCheckinRegister, json.RawMessage(`{"child_id":"`+childID.String()+`"}`), all())
	if err == nil || !strings.Contains(err.Error(), "neither output nor error") {
		t.Errorf("nil output must be an error, got %v", err)
	}
}

func TestGeneratedTypesNeverPrintPII(t *testing.T) {
	in := capapi.ChildEnrollInput{Name: childName, Guardian: capapi.ChildEnrollInputGuardian{Name: "Mae Sentinela", Phone: phone}}
	out := capapi.CheckinsByDateOutputClassesItemCheckinsItem{ChildLabel: childName}
	for _, s := range []string{fmt.Sprint(in), fmt.Sprintf("%v %+v %#v", in, &in, in), fmt.Sprint(out), capability.LogString(in.LogValue())} {
		for _, secret := range []string{childName, phone, "Mae Sentinela"} {
			if strings.Contains(s, secret) {
				t.Errorf("formatted value leaks %q: %s", secret, s)
			}
		}
	}
	if !strings.Contains(fmt.Sprint(in), "[redacted child_name]") {
		t.Errorf("expected a redaction marker, got %s", fmt.Sprint(in))
	}
}
