package rosterimport

import (
	"fmt"
	"strings"
)

// Schema is what one kind of file holds: its columns, the header names each is known by, and
// which columns need or stand in for which. [RosterSchema] is the roster's; another importer
// (internal/attendanceimport) declares its own and reads its files with [ReadTable], so every
// import of the church's spreadsheets shares one reader: encodings, separators, title rows,
// header matching and its errors, broken quotes, row numbers.
type Schema struct {
	// Columns are the fields, in the order the documentation lists them.
	Columns []Column
	// Needs pairs a field with the field it completes: {FieldChildLast, FieldChild} (a
	// last-name column needs a first-name column, which it follows).
	Needs [][2]Field
	// Instead pairs a required field with a field whose column may take its place:
	// {child, handle} accepts a handle column in a header without a child column.
	Instead [][2]Field
	aliases map[string]Field
}

// NewSchema builds a schema. Two columns sharing a header name (after folding) is a
// programming error: it panics.
func NewSchema(cols []Column, needs, instead [][2]Field) *Schema {
	s := &Schema{Columns: cols, Needs: needs, Instead: instead, aliases: map[string]Field{}}
	for _, c := range cols {
		for _, a := range c.Aliases {
			if prev, dup := s.aliases[fold(a)]; dup && prev != c.Field {
				panic(fmt.Sprintf("rosterimport: header name %q is both %s and %s", a, prev, c.Field))
			}
			s.aliases[fold(a)] = c.Field
		}
	}
	return s
}

// FieldOf is the field a header cell names, compared folded (case, accents, punctuation and
// spacing ignored).
func (s *Schema) FieldOf(header string) (Field, bool) {
	f, ok := s.aliases[fold(header)]
	return f, ok
}

// Aliases are the header names of field f (nil when the schema has no such field).
func (s *Schema) Aliases(f Field) []string {
	for _, c := range s.Columns {
		if c.Field == f {
			return c.Aliases
		}
	}
	return nil
}

// required reports whether field c must be in a header whose recognized columns are present.
func (s *Schema) required(c Column, present func(Field) bool) bool {
	if c.Required {
		for _, p := range s.Instead {
			if p[0] == c.Field && present(p[1]) {
				return false
			}
		}
		return true
	}
	for _, p := range s.Needs {
		if p[1] == c.Field && present(p[0]) {
			return true
		}
	}
	return false
}

// Table is a file read for a [Schema]: the rows that can be read, with what was learnt about
// the file. It holds cells as written (trimmed); what they mean is the importer's.
type Table struct {
	// Encoding is one of the Enc* values; Separator the column separator.
	Encoding  string
	Separator rune
	// HeaderRow is the spreadsheet row of the header (above 1 when title rows precede it).
	HeaderRow int
	// Columns maps each recognized field to the header cell it came from; Ignored lists the
	// header cells that match no field (header names are not personal data).
	Columns map[Field]string
	Ignored []string
	// Rows are the data rows that can be read, in file order.
	Rows []TableRow
	// Refused are the rows that cannot be read (an unclosed quote, the wrong number of
	// fields); Warnings the rows of a UTF-8 file read as Windows-1252.
	Refused  []Refusal
	Warnings []Warning
	// Lines is the number of data rows (blank rows not counted), refused ones included.
	Lines int
}

// TableRow is one readable data row.
type TableRow struct {
	// Line is the row's number in the spreadsheet (1 is its first row).
	Line   int
	fields []string
	index  map[Field]int
}

// Cell is the row's cell of field f, trimmed; "" when the file has no such column.
func (r TableRow) Cell(f Field) string {
	i, ok := r.index[f]
	if !ok || i >= len(r.fields) {
		return ""
	}
	return strings.TrimSpace(r.fields[i])
}

// Has reports whether the file has a column for field f.
func (t *Table) Has(f Field) bool { _, ok := t.Columns[f]; return ok }

// headerSearchRows is how many rows at the top of a file may precede the header (titles).
const headerSearchRows = 10

// ReadTable reads a file's bytes (at most [MaxFileBytes], [MaxRows] data rows) as a table of
// schema s: the encoding (decode.go), the separator and the header row (the row among the
// first ten that names the most fields of s), every required column present, and the rows. It
// returns a *FileError when the file as a whole cannot be read; rows that cannot are in
// Table.Refused.
func ReadTable(raw []byte, s *Schema) (*Table, error) {
	if len(raw) > MaxFileBytes {
		return nil, fileError(fmt.Sprintf("o arquivo passa de %d MiB; divida-o em partes", MaxFileBytes>>20),
			fmt.Sprintf("the file is larger than %d MiB; split it", MaxFileBytes>>20))
	}
	dec, err := decode(raw)
	if err != nil {
		return nil, err
	}
	t := &Table{Encoding: dec.encoding, Columns: map[Field]string{}}
	sep, text := sepLine(dec.text)
	lineOffset := 0
	if sep != 0 {
		lineOffset = 1
	}
	if strings.TrimSpace(text) == "" {
		return nil, fileError("o arquivo está vazio", "the file is empty")
	}
	seps := []byte{';', ',', '\t'}
	if sep != 0 {
		seps = []byte{sep}
	}
	bestScore, headerAt := -1, 0
	for _, c := range seps {
		for i, rec := range readRecords(text, c, 0, headerSearchRows) {
			if n := s.recognized(rec.Fields); n > bestScore {
				bestScore, headerAt, sep = n, i, c
			}
		}
	}
	top := readRecords(text, sep, 0, headerSearchRows)
	if bestScore < 2 {
		return nil, s.headerError(firstNonBlank(text), nil)
	}
	header := top[headerAt]
	t.Separator, t.HeaderRow = rune(sep), header.Row
	index := map[Field]int{}
	width := 0
	for i, h := range header.Fields {
		h = squeeze(h)
		if h != "" {
			width = i + 1
		}
		field, ok := s.FieldOf(h)
		if !ok {
			if h != "" {
				t.Ignored = append(t.Ignored, h)
			}
			continue
		}
		if prev, dup := t.Columns[field]; dup {
			return nil, fileError(fmt.Sprintf("as colunas %q e %q querem dizer a mesma coisa; deixe só uma", prev, h),
				fmt.Sprintf("columns %q and %q mean the same thing; keep only one", prev, h))
		}
		t.Columns[field], index[field] = h, i
	}
	present := func(f Field) bool { _, ok := index[f]; return ok }
	for _, c := range s.Columns {
		if s.required(c, present) && !present(c.Field) {
			return nil, s.headerError(header.Fields, index)
		}
	}

	mixed := map[int]bool{}
	for _, l := range dec.mixedLines {
		mixed[l-lineOffset] = true
	}
	need := lastRecognized(index)
	for _, rec := range readRecords(text, sep, width, 0) {
		if rec.Row <= header.Row || blank(rec.Fields) {
			continue
		}
		t.Lines++
		if t.Lines > MaxRows {
			return nil, fileError(fmt.Sprintf("o arquivo tem mais de %d linhas; divida-o em partes", MaxRows),
				fmt.Sprintf("the file has more than %d rows; split it", MaxRows))
		}
		if rec.Unclosed >= 0 {
			col := fmt.Sprintf("%d", rec.Unclosed+1)
			if rec.Unclosed < len(header.Fields) && squeeze(header.Fields[rec.Unclosed]) != "" {
				col = fmt.Sprintf("%q", squeeze(header.Fields[rec.Unclosed]))
			}
			t.Refused = append(t.Refused, refuse(rec.Row, "uma aspa (\") aberta na coluna "+col+" nunca é fechada: a linha não foi lida; feche a aspa ou apague-a e importe de novo",
				"a quote (\") opened in column "+col+" is never closed: the row was not read; close the quote or delete it and import again"))
			continue
		}
		n := len(rec.Fields)
		for n > width && strings.TrimSpace(rec.Fields[n-1]) == "" {
			n--
		}
		if n > width || len(rec.Fields) < need {
			n = min(n, len(rec.Fields))
			t.Refused = append(t.Refused, refuse(rec.Row, fmt.Sprintf("a linha tem %d campos e o cabeçalho %d (um separador dentro de uma célula sem aspas?); corrija a linha", n, width),
				fmt.Sprintf("the row has %d fields and the header %d (a separator inside a cell without quotes?); fix the row", n, width)))
			continue
		}
		for l := rec.Line; l <= rec.EndLine; l++ {
			if mixed[l] {
				t.Warnings = append(t.Warnings, Warning{rec.Row, Reason{
					"a linha não estava em UTF-8 como o resto do arquivo e foi lida como Windows-1252: confira os acentos dela",
					"the row was not UTF-8 like the rest of the file and was read as Windows-1252: check its accents"}})
				break
			}
		}
		t.Rows = append(t.Rows, TableRow{Line: rec.Row, fields: rec.Fields, index: index})
	}
	return t, nil
}

// lastRecognized is the number of fields a row needs to reach every recognized column.
func lastRecognized(index map[Field]int) int {
	n := 0
	for _, i := range index {
		n = max(n, i+1)
	}
	return n
}

// recognized counts the distinct fields a candidate header row names.
func (s *Schema) recognized(cells []string) int {
	seen := map[Field]bool{}
	for _, c := range cells {
		if fl, ok := s.FieldOf(c); ok {
			seen[fl] = true
		}
	}
	return len(seen)
}

// firstNonBlank is the first non-blank line of text, split on its most frequent separator.
func firstNonBlank(text string) []string {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		best := ","
		for _, c := range []string{";", "\t"} {
			if strings.Count(l, c) > strings.Count(l, best) {
				best = c
			}
		}
		return strings.Split(strings.TrimSpace(l), best)
	}
	return nil
}

// headerError names the required fields the header lacks, the columns it has, and for each
// missing field the unrecognized column closest to one of its names.
func (s *Schema) headerError(cells []string, index map[Field]int) error {
	var found, unknown []string
	for _, c := range cells {
		if c = squeeze(c); c == "" {
			continue
		}
		found = append(found, fmt.Sprintf("%q", c))
		if _, ok := s.FieldOf(c); !ok {
			unknown = append(unknown, c)
		}
	}
	var missing, hintsPT, hintsEN []string
	present := func(fl Field) bool { _, ok := index[fl]; return ok }
	for _, c := range s.Columns {
		if !s.required(c, present) || present(c.Field) {
			continue
		}
		missing = append(missing, fmt.Sprintf("%q", c.Aliases[0]))
		if col, ok := closest(unknown, c.Aliases); ok {
			hintsPT = append(hintsPT, fmt.Sprintf("a coluna %q seria %q? renomeie-a", col, c.Aliases[0]))
			hintsEN = append(hintsEN, fmt.Sprintf("is column %q meant as %q? rename it", col, c.Aliases[0]))
		}
	}
	foundText := "nenhuma / none"
	if len(found) > 0 {
		foundText = strings.Join(found, ", ")
	}
	pt := "faltam colunas no cabeçalho: " + strings.Join(missing, ", ") + "; colunas encontradas: " + foundText
	en := "the header lacks columns: " + strings.Join(missing, ", ") + "; columns found: " + foundText
	if len(hintsPT) > 0 {
		pt += "; " + strings.Join(hintsPT, "; ")
		en += "; " + strings.Join(hintsEN, "; ")
	}
	return fileError(pt+" (veja a lista de nomes aceitos em docs/onboarding.md)", en+" (docs/onboarding.md lists the accepted names)")
}

// closest is the column of cols nearest to one of aliases by edit distance of the folded
// names, when it is near enough to be a likely misspelling or abbreviation.
func closest(cols, aliases []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, c := range cols {
		fc := fold(c)
		for _, a := range aliases {
			fa := fold(a)
			d := levenshtein(fc, fa)
			if strings.HasPrefix(fa, fc) && len(fc) >= 3 || strings.Contains(fc, fa) {
				d = min(d, 1)
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
	}
	return best, best != "" && bestD <= max(2, len([]rune(fold(best)))/3)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
