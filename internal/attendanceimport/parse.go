package attendanceimport

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

// Field is a column the importer understands (the roster's type: the reader is shared).
type Field = rosterimport.Field

// The fields of an attendance file. The child's name, last name, birth date and class are
// the roster's fields, so a column means the same in both files.
const (
	FieldChild     = rosterimport.FieldChild
	FieldChildLast = rosterimport.FieldChildLast
	FieldHandle    = Field("handle")
	FieldBirthDate = rosterimport.FieldBirthDate
	FieldDate      = Field("date")
	FieldClass     = rosterimport.FieldClass
	FieldCheckIn   = Field("check_in")
	FieldCheckOut  = Field("check_out")
)

// Columns is the documented column list, in the order docs/onboarding.md gives it. A file
// needs the date, the class, and the child (a name column, or a handle column instead); the
// header names are compared folded, like the roster's. The names of `neemias-mcp export
// attendance` are among them, so its file imports as it is.
var Columns = []rosterimport.Column{
	{Field: FieldChild, Required: true, Aliases: append([]string{"criança", "nome da criança"}, rosterimport.RosterSchema.Aliases(FieldChild)...)},
	{Field: FieldChildLast, Aliases: rosterimport.RosterSchema.Aliases(FieldChildLast)},
	{Field: FieldHandle, Aliases: []string{"código", "código da criança", "código neemias", "handle", "child handle", "child code"}},
	{Field: FieldBirthDate, Aliases: rosterimport.RosterSchema.Aliases(FieldBirthDate)},
	{Field: FieldDate, Required: true, Aliases: []string{"data", "dia", "data do culto", "dia do culto", "culto", "data da presença", "data de presença",
		"data da aula", "date", "day", "service date", "service day", "attendance date", "date attended"}},
	{Field: FieldClass, Required: true, Aliases: append(rosterimport.RosterSchema.Aliases(FieldClass), "nome da turma", "sala/turma", "class name")},
	{Field: FieldCheckIn, Aliases: []string{"entrada", "hora de entrada", "horário de entrada", "hora da entrada", "check-in", "checkin",
		"hora do check-in", "horário do check-in", "chegada", "hora da chegada", "hora de chegada", "checked in", "check-in time",
		"time in", "arrival", "arrival time"}},
	{Field: FieldCheckOut, Aliases: []string{"saída", "hora de saída", "horário de saída", "hora da saída", "check-out", "checkout",
		"hora do check-out", "horário do check-out", "retirada", "hora da retirada", "horário da retirada", "checked out", "check-out time",
		"time out", "picked up", "pick-up time", "pickup time", "departure"}},
}

// Schema is the attendance file's schema: a last-name column beside the child column, a
// handle column in place of the child column.
var Schema = rosterimport.NewSchema(Columns, [][2]Field{{FieldChildLast, FieldChild}}, [][2]Field{{FieldChild, FieldHandle}})

// nounDate names the service day in reasons ("falta a data", "the date is missing").
var nounDate = rosterimport.DateNoun{PT: "data", EN: "date"}

// handleRE is a child handle (migration 00096: six Crockford base32 characters).
var handleRE = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{6}$`)

// handleOf reads a cell as a handle: upper case, spaces and hyphens dropped; ok false when it
// is not of a handle's form.
func handleOf(cell string) (string, bool) {
	h := strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(cell))
	return h, handleRE.MatchString(h)
}

// Row is a valid row of the file, normalized (not yet matched with the church's records).
type Row struct {
	// Line is the row's number in the spreadsheet (1 is its first row).
	Line int
	// Name is the child's name as the roster stores it ("" when only a handle is given);
	// Handle the handle column's cell, upper case ("" without one). MaybeHandle is the child
	// cell read as a handle when it has a handle's form (one word of six letters and
	// digits): it names the child whose handle it is, if any, and is a name otherwise.
	Name, Handle, MaybeHandle string
	// Birth is the birth-date cell's date, when given.
	Birth *time.Time
	// Date is the service day, at UTC midnight.
	Date time.Time
	// Class is the class cell as written, spaces squeezed.
	Class string
	// In and Out are the check-in and check-out times, minutes after midnight; -1 without.
	In, Out int
}

// File is a parsed attendance file: the shared reader's findings, and its valid rows.
type File struct {
	*rosterimport.Table
	// DateOrder is the order of the file's day/month dates, given or detected.
	DateOrder string
	Rows      []Row
}

// ParseOptions are the operator's statements about a file.
type ParseOptions struct {
	// DateOrder is rosterimport.OrderDMY, OrderMDY or OrderYMD; empty: detected from the
	// values of the date and birth-date columns.
	DateOrder string
}

// Parse reads an attendance file; today is the church's. It returns a *rosterimport.FileError
// when the file as a whole cannot be imported (encoding, header, size, date order); rows it
// cannot accept are in File.Refused.
func Parse(raw []byte, today time.Time, opts ParseOptions) (*File, error) {
	if err := rosterimport.CheckDateOrder(opts.DateOrder); err != nil {
		return nil, err
	}
	t, err := rosterimport.ReadTable(raw, Schema)
	if err != nil {
		return nil, err
	}
	f := &File{Table: t, DateOrder: opts.DateOrder}
	if f.DateOrder == "" {
		cols := []rosterimport.DateColumn{{Name: t.Columns[FieldDate]}}
		if t.Has(FieldBirthDate) {
			cols = append(cols, rosterimport.DateColumn{Name: t.Columns[FieldBirthDate]})
		}
		for _, tr := range t.Rows {
			for i, fl := range []Field{FieldDate, FieldBirthDate}[:len(cols)] {
				cols[i].Cells, cols[i].Rows = append(cols[i].Cells, tr.Cell(fl)), append(cols[i].Rows, tr.Line)
			}
		}
		if f.DateOrder, err = rosterimport.DetectDateOrder(cols...); err != nil {
			return nil, err
		}
	}
	for _, tr := range t.Rows {
		row, bad := parseRow(tr, t.Columns, today, f.DateOrder)
		if bad != nil {
			t.Refused = append(t.Refused, *bad)
			continue
		}
		f.Rows = append(f.Rows, row)
	}
	slices.SortStableFunc(t.Refused, func(a, b rosterimport.Refusal) int { return a.Line - b.Line })
	return f, nil
}

func refuse(line int, pt, en string) *rosterimport.Refusal {
	return &rosterimport.Refusal{Line: line, Reason: rosterimport.Reason{PT: pt, EN: en}}
}

// parseRow reads one row's cells; cols are the header names of the file's columns.
func parseRow(tr rosterimport.TableRow, cols map[Field]string, today time.Time, order string) (Row, *rosterimport.Refusal) {
	row := Row{Line: tr.Line, In: -1, Out: -1}
	bad := func(r rosterimport.Reason) (Row, *rosterimport.Refusal) { return Row{}, refuse(tr.Line, r.PT, r.EN) }
	row.Name = rosterimport.NormalizeName(rosterimport.Squeeze(tr.Cell(FieldChild) + " " + tr.Cell(FieldChildLast)))
	if h := tr.Cell(FieldHandle); h != "" {
		var ok bool
		if row.Handle, ok = handleOf(h); !ok {
			return bad(rosterimport.Reason{PT: fmt.Sprintf("a coluna %q não traz um código de criança do Neemias (6 letras e algarismos, como os da lista da turma)", cols[FieldHandle]),
				EN: fmt.Sprintf("column %q does not hold a Neemias child handle (6 letters and digits, as on the class list)", cols[FieldHandle])})
		}
	}
	if row.Name == "" && row.Handle == "" {
		return bad(reasonNoChild)
	}
	if c := tr.Cell(FieldChild); tr.Cell(FieldChildLast) == "" && !strings.ContainsAny(c, " \t") {
		if h, ok := handleOf(c); ok {
			row.MaybeHandle = h
		}
	}
	if c := tr.Cell(FieldBirthDate); c != "" {
		b, reason := rosterimport.ParseDate(c, order, rosterimport.NounBirthDate)
		if reason != nil {
			return bad(*reason)
		}
		row.Birth = &b
	}
	d, reason := rosterimport.ParseDate(tr.Cell(FieldDate), order, nounDate)
	if reason != nil {
		return bad(*reason)
	}
	if !d.Before(today) {
		return bad(reasonNotPast)
	}
	row.Date = d
	if row.Class = rosterimport.Squeeze(tr.Cell(FieldClass)); row.Class == "" {
		return bad(reasonNoClass)
	}
	for _, c := range []struct {
		dst   *int
		field Field
	}{{&row.In, FieldCheckIn}, {&row.Out, FieldCheckOut}} {
		cell := tr.Cell(c.field)
		if cell == "" {
			continue
		}
		m, r := parseClock(cell, cols[c.field], row.Date, order)
		if r != nil {
			return bad(*r)
		}
		*c.dst = m
	}
	if row.Out >= 0 && row.In >= 0 && row.Out < row.In {
		return bad(rosterimport.Reason{PT: fmt.Sprintf("o horário da coluna %q é anterior ao da coluna %q", cols[FieldCheckOut], cols[FieldCheckIn]),
			EN: fmt.Sprintf("the time in column %q is before the one in column %q", cols[FieldCheckOut], cols[FieldCheckIn])})
	}
	return row, nil
}

var (
	clockRE    = regexp.MustCompile(`^(\d{1,2})(?:[:hH](\d{2})?)?(?::(\d{2}))?\s*(?i:(am|pm|a\.m\.|p\.m\.))?$`)
	dateTimeRE = regexp.MustCompile(`^(\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4})(?:\s+|T)(\d.*)$`)
)

// parseClock reads a time of day in minutes after midnight: 9:30, 09:30, 09:30:00 (seconds
// ignored), 9h30, 9h, 9:30 AM, 12:05 pm; a date before it (15/06/2025 09:30, an ISO
// date-time without a zone) must be the row's day. column names the cell's column in reasons.
func parseClock(cell, column string, day time.Time, order string) (int, *rosterimport.Reason) {
	unreadable := &rosterimport.Reason{PT: fmt.Sprintf("a coluna %q não traz um horário legível; use HH:MM (por exemplo 09:30)", column),
		EN: fmt.Sprintf("column %q does not hold a readable time; use HH:MM (for example 09:30)", column)}
	impossible := &rosterimport.Reason{PT: fmt.Sprintf("a coluna %q tem uma hora que não existe", column),
		EN: fmt.Sprintf("column %q has a time that does not exist", column)}
	s := strings.TrimSpace(cell)
	if len(s) > 8 {
		if m := dateTimeRE.FindStringSubmatch(s); m != nil {
			d, reason := rosterimport.ParseDate(m[1], order, nounDate)
			if reason != nil {
				return 0, unreadable
			}
			if !d.Equal(day) {
				return 0, &rosterimport.Reason{PT: fmt.Sprintf("o horário da coluna %q é de outro dia que a data da linha", column),
					EN: fmt.Sprintf("the time in column %q is on another day than the row's date", column)}
			}
			s = m[2]
		}
	}
	m := clockRE.FindStringSubmatch(s)
	if m == nil || (m[2] == "" && m[4] == "" && !strings.ContainsAny(s, "hH")) { // a bare number ("9") is not a time
		return 0, unreadable
	}
	h, min := atoi(m[1]), atoi(m[2])
	if ampm := strings.ToLower(strings.ReplaceAll(m[4], ".", "")); ampm != "" {
		if h < 1 || h > 12 {
			return 0, impossible
		}
		h %= 12
		if ampm == "pm" {
			h += 12
		}
	}
	if h > 23 || min > 59 || (m[3] != "" && atoi(m[3]) > 59) {
		return 0, impossible
	}
	return h*60 + min, nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// The reasons of a refused row that are not about one cell's format.
var (
	reasonNoChild = rosterimport.Reason{PT: "falta a criança: o nome completo dela ou o código",
		EN: "the child is missing: their full name or handle"}
	reasonNotPast = rosterimport.Reason{PT: "a data é de hoje ou do futuro: só se importa presença passada (o check-in de hoje se faz na entrada, com o código de retirada)",
		EN: "the date is today or in the future: only past attendance is imported (today's check-in is made at the door, with its pick-up code)"}
	reasonNoClass = rosterimport.Reason{PT: "falta a turma", EN: "the class is missing"}
)
