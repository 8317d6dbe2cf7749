package rosterimport

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/neemias/neemias-mcp/internal/pii"
)

// Field is a column the importer understands.
type Field string

// The fields of a roster file.
const (
	FieldChild        Field = "child"
	FieldBirthDate    Field = "birth_date"
	FieldGuardian     Field = "guardian"
	FieldPhone        Field = "phone"
	FieldRelationship Field = "relationship"
	FieldConsent      Field = "consent"
	FieldLegalBasis   Field = "legal_basis"
	FieldClass        Field = "class"
	// FieldAllergies and FieldMedicalNotes are health data (LGPD art. 11): shown only under
	// health:read, and an empty cell never erases what the roster has.
	FieldAllergies    Field = "allergies"
	FieldMedicalNotes Field = "medical_notes"
)

// The name columns of a file that splits names: the first name goes in the child or guardian
// column (Nome, First Name), the last name in these (Sobrenome, Last Name).
const (
	FieldChildLast    Field = "child_last_name"
	FieldGuardianLast Field = "guardian_last_name"
)

// Column documents one field: the header names it is recognized by (compared after folding:
// case, accents, punctuation and spacing ignored) and whether a file must have it.
type Column struct {
	Field    Field
	Required bool
	Aliases  []string
}

// Columns is the documented column list, in the order docs/onboarding.md gives it.
var Columns = []Column{
	{FieldChild, true, []string{"nome", "nome da criança", "criança", "nome completo", "nome completo da criança", "nome do aluno", "aluno", "aluna",
		"primeiro nome", "nome (primeiro)", "primeiro nome da criança", "name", "child", "child name", "child's name", "child full name", "full name",
		"first name", "child first name", "student", "student name"}},
	{FieldChildLast, false, []string{"sobrenome", "sobrenome da criança", "último nome", "last name", "surname", "family name", "child last name", "child's last name"}},
	{FieldBirthDate, true, []string{"nascimento", "data de nascimento", "data nascimento", "dt nascimento", "dt nasc", "data nasc", "data de nascimento da criança",
		"nascimento da criança", "birth_date", "birth date", "birthdate", "date of birth", "dob", "birthday", "child birthdate", "child date of birth"}},
	{FieldGuardian, true, []string{"responsável", "nome do responsável", "nome completo do responsável", "responsável (nome completo)", "nome do pai ou responsável",
		"nome da mãe ou responsável", "pai ou responsável", "mãe ou responsável", "primeiro nome do responsável", "guardian", "guardian name",
		"guardian_name", "guardian full name", "guardian first name", "parent", "parent name", "parent/guardian", "parent guardian name",
		"parent/guardian name", "parent first name", "parent/guardian first name"}},
	{FieldGuardianLast, false, []string{"sobrenome do responsável", "guardian last name", "parent last name", "parent/guardian last name"}},
	{FieldPhone, true, []string{"telefone", "celular", "whatsapp", "fone", "telefone do responsável", "telefone (whatsapp)", "celular (whatsapp)",
		"whatsapp do responsável", "telefone celular", "celular do responsável", "telefone para contato", "contato", "telefone/whatsapp",
		"phone", "guardian phone", "guardian_phone", "parent phone", "mobile phone", "mobile", "cell phone", "cell", "phone number",
		"primary phone", "contact phone", "guardian mobile", "parent mobile phone"}},
	{FieldRelationship, false, []string{"parentesco", "relação", "vínculo", "grau de parentesco", "parentesco com a criança", "relationship",
		"relation", "relationship to child"}},
	{FieldConsent, false, []string{"consentimento", "versão do consentimento", "termo", "versão do termo", "termo lgpd", "termo de consentimento",
		"lgpd", "autorização lgpd", "consentimento lgpd", "aceite lgpd", "aceite do termo", "consent", "consent version", "consent_version",
		"lgpd consent", "data consent", "privacy consent"}},
	{FieldLegalBasis, false, []string{"base legal", "legal basis", "legal_basis"}},
	{FieldClass, false, []string{"turma", "classe", "sala", "class", "classroom"}},
	{FieldAllergies, false, []string{"alergias", "alergia", "alergia(s)", "alergias (se houver)", "allergies", "allergy"}},
	{FieldMedicalNotes, false, []string{"observações médicas", "observação médica", "observações de saúde", "saúde", "condições médicas",
		"medical notes", "medical_notes", "health notes", "medical conditions", "health conditions"}},
}

var aliasIndex = func() map[string]Field {
	m := map[string]Field{}
	for _, c := range Columns {
		for _, a := range c.Aliases {
			m[fold(a)] = c.Field
		}
	}
	return m
}()

// NoTextVersion is the text_version of a consent record whose legal basis is not consent and
// whose row names no text version.
const NoTextVersion = "n/a"

// Reason says why a row was refused, in Portuguese and in English, in words a church
// secretary understands. It never quotes the row's values.
type Reason struct{ PT, EN string }

// Refusal is a refused row: its line in the file (1 is the header) and why.
type Refusal struct {
	Line int
	Reason
}

func refuse(line int, pt, en string) Refusal { return Refusal{Line: line, Reason: Reason{pt, en}} }

// FileError is a problem with the whole file (its encoding, its header): nothing is imported.
type FileError struct{ Reason }

func (e *FileError) Error() string { return e.PT + " / " + e.EN }

func fileError(pt, en string) error { return &FileError{Reason{pt, en}} }

// Warning is something a row's import did that the operator should know: a relationship word
// read as "other", a mobile number given its 9, a homonym child created apart. It never quotes
// the row's values.
type Warning struct {
	Line int
	Reason
}

// Row is a valid row of the file, normalized.
type Row struct {
	// Line is the row's number in the spreadsheet (1 is its first row).
	Line         int
	ChildName    string
	BirthDate    time.Time // a date at UTC midnight
	GuardianName string
	Phone        string // E.164
	// Relationship is the schema's value, or "" when the file says nothing (no column, an
	// empty cell, or a word the importer does not know): a new link is then "other", an
	// existing one keeps its value.
	Relationship string
	// TextVersion and LegalBasis make the consent record; LegalBasis is never empty.
	TextVersion string
	LegalBasis  string
	// Class is the class column's cell as written (empty: place by age).
	Class string
	// Allergies and MedicalNotes are the health cells, spaces squeezed; empty: none given.
	Allergies, MedicalNotes string
}

// File is a parsed roster file.
type File struct {
	// Encoding is one of the Enc* values; Separator the column separator.
	Encoding  string
	Separator rune
	// HeaderRow is the spreadsheet row of the header (above 1 when title rows precede it).
	HeaderRow int
	// DateOrder is the order of the file's day/month dates (OrderDMY, OrderMDY, OrderYMD),
	// given or detected.
	DateOrder string
	// Columns maps each recognized field to the header cell it came from; Ignored lists the
	// header cells that match no field (header names are not personal data).
	Columns  map[Field]string
	Ignored  []string
	Rows     []Row
	Refused  []Refusal
	Warnings []Warning
	// Lines is the number of data rows read (blank rows not counted).
	Lines int
}

// Limits of a roster file.
const (
	MaxFileBytes = 64 << 20
	MaxRows      = 100_000
)

// ParseOptions are the operator's statements about a file.
type ParseOptions struct {
	// DateOrder is OrderDMY, OrderMDY or OrderYMD; empty: detected from the values.
	DateOrder string
	// DefaultCountry is the ISO 3166 code of numbers written without +; empty: BR.
	DefaultCountry string
	// ConsentVersion is the registered consent text that a "yes" consent cell refers to
	// (--consent-version); empty: a "yes" cell refuses its row. Run checks it is registered.
	ConsentVersion string
}

// headerSearchRows is how many rows at the top of a file may precede the header (titles).
const headerSearchRows = 10

// Parse reads a roster file. It returns a *FileError when the file as a whole cannot be
// imported (encoding, header, size, date order); rows it cannot accept are in File.Refused.
func Parse(r io.Reader, today time.Time, opts ParseOptions) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	if len(raw) > MaxFileBytes {
		return nil, fileError(fmt.Sprintf("o arquivo passa de %d MiB; divida-o em partes", MaxFileBytes>>20),
			fmt.Sprintf("the file is larger than %d MiB; split it", MaxFileBytes>>20))
	}
	region, err := checkRegion(opts.DefaultCountry)
	if err != nil {
		return nil, err
	}
	switch opts.DateOrder {
	case "", OrderDMY, OrderMDY, OrderYMD:
	default:
		return nil, fmt.Errorf("--date-order %q: use dmy, mdy or ymd", opts.DateOrder)
	}
	dec, err := decode(raw)
	if err != nil {
		return nil, err
	}
	f := &File{Encoding: dec.encoding, Columns: map[Field]string{}}
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
			if n := recognized(rec.Fields); n > bestScore {
				bestScore, headerAt, sep = n, i, c
			}
		}
	}
	top := readRecords(text, sep, 0, headerSearchRows)
	if bestScore < 2 {
		return nil, headerError(firstNonBlank(text), nil)
	}
	header := top[headerAt]
	f.Separator, f.HeaderRow = rune(sep), header.Row
	index := map[Field]int{}
	width := 0
	for i, h := range header.Fields {
		h = squeeze(h)
		if h != "" {
			width = i + 1
		}
		field, ok := aliasIndex[fold(h)]
		if !ok {
			if h != "" {
				f.Ignored = append(f.Ignored, h)
			}
			continue
		}
		if prev, dup := f.Columns[field]; dup {
			return nil, fileError(fmt.Sprintf("as colunas %q e %q querem dizer a mesma coisa; deixe só uma", prev, h),
				fmt.Sprintf("columns %q and %q mean the same thing; keep only one", prev, h))
		}
		f.Columns[field], index[field] = h, i
	}
	for _, c := range Columns {
		if _, ok := index[c.Field]; c.Required && !ok {
			return nil, headerError(header.Fields, index)
		}
	}
	for _, pair := range [][2]Field{{FieldChildLast, FieldChild}, {FieldGuardianLast, FieldGuardian}} {
		if _, ok := index[pair[0]]; ok {
			if _, ok := index[pair[1]]; !ok {
				return nil, headerError(header.Fields, index)
			}
		}
	}

	recs := readRecords(text, sep, width, 0)
	var data []record
	for _, rec := range recs {
		if rec.Row > header.Row {
			data = append(data, rec)
		}
	}
	cellOf := func(rec record, fl Field) string {
		i, ok := index[fl]
		if !ok || i >= len(rec.Fields) {
			return ""
		}
		return strings.TrimSpace(rec.Fields[i])
	}
	colName := func(fl Field) string { return f.Columns[fl] }
	// The rows a check must skip: blank, an unclosed quote, the wrong number of fields.
	problem := func(rec record) (skip bool, bad *Refusal) {
		if blank(rec.Fields) {
			return true, nil
		}
		if rec.Unclosed >= 0 {
			col := fmt.Sprintf("%d", rec.Unclosed+1)
			if rec.Unclosed < len(header.Fields) && squeeze(header.Fields[rec.Unclosed]) != "" {
				col = fmt.Sprintf("%q", squeeze(header.Fields[rec.Unclosed]))
			}
			r := refuse(rec.Row, "uma aspa (\") aberta na coluna "+col+" nunca é fechada: a linha não foi lida; feche a aspa ou apague-a e importe de novo",
				"a quote (\") opened in column "+col+" is never closed: the row was not read; close the quote or delete it and import again")
			return false, &r
		}
		n := len(rec.Fields)
		for n > width && strings.TrimSpace(rec.Fields[n-1]) == "" {
			n--
		}
		if n > width || len(rec.Fields) < lastRecognized(index) {
			n = min(n, len(rec.Fields))
			r := refuse(rec.Row, fmt.Sprintf("a linha tem %d campos e o cabeçalho %d (um separador dentro de uma célula sem aspas?); corrija a linha", n, width),
				fmt.Sprintf("the row has %d fields and the header %d (a separator inside a cell without quotes?); fix the row", n, width))
			return false, &r
		}
		return false, nil
	}

	// The order of the day/month dates: given, or decided by the values.
	f.DateOrder = opts.DateOrder
	if f.DateOrder == "" {
		var cells []string
		var rows []int
		for _, rec := range data {
			if skip, bad := problem(rec); !skip && bad == nil {
				cells, rows = append(cells, cellOf(rec, FieldBirthDate)), append(rows, rec.Row)
			}
		}
		if f.DateOrder, err = detectDateOrder(cells, rows, colName(FieldBirthDate)); err != nil {
			return nil, err
		}
	}

	mixed := map[int]bool{}
	for _, l := range dec.mixedLines {
		mixed[l-lineOffset] = true
	}
	for _, rec := range data {
		skip, bad := problem(rec)
		if skip {
			continue
		}
		f.Lines++
		if f.Lines > MaxRows {
			return nil, fileError(fmt.Sprintf("o arquivo tem mais de %d linhas; divida-o em partes", MaxRows),
				fmt.Sprintf("the file has more than %d rows; split it", MaxRows))
		}
		if bad != nil {
			f.Refused = append(f.Refused, *bad)
			continue
		}
		for l := rec.Line; l <= rec.EndLine; l++ {
			if mixed[l] {
				f.Warnings = append(f.Warnings, Warning{rec.Row, Reason{
					"a linha não estava em UTF-8 como o resto do arquivo e foi lida como Windows-1252: confira os acentos dela",
					"the row was not UTF-8 like the rest of the file and was read as Windows-1252: check its accents"}})
				break
			}
		}
		row, warns, bad := parseRow(rec.Row, func(fl Field) string { return cellOf(rec, fl) }, colName, today, f.DateOrder, region, opts.ConsentVersion)
		if bad != nil {
			f.Refused = append(f.Refused, *bad)
			continue
		}
		f.Warnings = append(f.Warnings, warns...)
		f.Rows = append(f.Rows, row)
	}
	return f, nil
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
func recognized(cells []string) int {
	seen := map[Field]bool{}
	for _, c := range cells {
		if fl, ok := aliasIndex[fold(c)]; ok {
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
func headerError(cells []string, index map[Field]int) error {
	var found, unknown []string
	for _, c := range cells {
		if c = squeeze(c); c == "" {
			continue
		}
		found = append(found, fmt.Sprintf("%q", c))
		if _, ok := aliasIndex[fold(c)]; !ok {
			unknown = append(unknown, c)
		}
	}
	var missing, hintsPT, hintsEN []string
	need := func(fl Field) bool { _, ok := index[fl]; return !ok }
	for _, c := range Columns {
		required := c.Required || (c.Field == FieldChild && !need(FieldChildLast)) || (c.Field == FieldGuardian && !need(FieldGuardianLast))
		if !required || !need(c.Field) {
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

// earliestBirth is the schema's lower bound of children.birth_date.
var earliestBirth = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// Warnings of a row, in both languages.
var (
	warnRelationship = Reason{"parentesco não reconhecido: o vínculo novo ficou como \"outro\" (um vínculo existente fica como estava); corrija a palavra se quiser",
		"relationship not recognized: a new link was recorded as \"other\" (an existing link keeps its value); fix the word if you like"}
	warnMobileNine = Reason{"celular com 8 dígitos: foi acrescentado o 9 que todo celular tem desde 2016",
		"8-digit mobile number: the 9 every Brazilian mobile has had since 2016 was added"}
)

func parseRow(line int, cell func(Field) string, col func(Field) string, today time.Time, order, region, yesVersion string) (Row, []Warning, *Refusal) {
	bad := func(pt, en string) (Row, []Warning, *Refusal) {
		r := refuse(line, pt, en)
		return Row{}, nil, &r
	}
	var warns []Warning
	joinName := func(first, last Field) string {
		return normalizeName(squeeze(cell(first) + " " + cell(last)))
	}
	row := Row{Line: line, ChildName: joinName(FieldChild, FieldChildLast), GuardianName: joinName(FieldGuardian, FieldGuardianLast), Class: squeeze(cell(FieldClass))}
	switch n := utf8.RuneCountInString(row.ChildName); {
	case n == 0:
		return bad("falta o nome da criança", "the child's name is missing")
	case n < 2 || n > 120:
		return bad("o nome da criança deve ter de 2 a 120 letras", "the child's name must have 2 to 120 characters")
	}
	birth, reason := parseDate(cell(FieldBirthDate), order)
	if reason != nil {
		return bad(reason.PT, reason.EN)
	}
	switch {
	case birth.After(today):
		return bad("a data de nascimento está no futuro", "the birth date is in the future")
	case birth.Before(earliestBirth):
		return bad("a data de nascimento é anterior a 01/01/1990", "the birth date is before 1990-01-01")
	}
	row.BirthDate = birth
	switch n := utf8.RuneCountInString(row.GuardianName); {
	case n == 0:
		return bad("falta o nome do responsável", "the guardian's name is missing")
	case n < 2 || n > 120:
		return bad("o nome do responsável deve ter de 2 a 120 letras", "the guardian's name must have 2 to 120 characters")
	}
	phone, nine, reason := parsePhone(cell(FieldPhone), region)
	if reason != nil {
		return bad(reason.PT, reason.EN)
	}
	if nine {
		warns = append(warns, Warning{line, warnMobileNine})
	}
	row.Phone = phone
	if rel := fold(cell(FieldRelationship)); rel != "" {
		if row.Relationship = Relationships[rel]; row.Relationship == "" {
			warns = append(warns, Warning{line, warnRelationship})
		}
	}
	consentCol := col(FieldConsent)
	basis := fold(cell(FieldLegalBasis))
	if basis != "" {
		if row.LegalBasis = LegalBases[basis]; row.LegalBasis == "" {
			return bad("base legal desconhecida; use consentimento, obrigação legal ou legítimo interesse",
				"unknown legal basis; use consent, legal obligation or legitimate interest")
		}
	}
	otherBasis := row.LegalBasis != "" && row.LegalBasis != "consent"
	version := cell(FieldConsent)
	switch classifyConsent(version) {
	case consentEmpty:
		version = ""
	case consentNo:
		if !otherBasis {
			return bad(fmt.Sprintf("consentimento pendente: a coluna %q diz que o responsável não assinou, recusou ou ainda não respondeu; a criança não foi importada (importe-a de novo quando o termo estiver assinado)", consentCol),
				fmt.Sprintf("consent pending: column %q says the guardian has not signed, refused or not answered yet; the child was not imported (import it again once the consent is signed)", consentCol))
		}
		version = ""
	case consentYes:
		if yesVersion == "" {
			return bad(fmt.Sprintf("a coluna %q diz sim, mas não qual termo o responsável aceitou: importe com --consent-version e a versão do termo (registrada com neemias-mcp consent-text add)", consentCol),
				fmt.Sprintf("column %q says yes but not which consent text the guardian agreed to: import with --consent-version and the text's version (registered with neemias-mcp consent-text add)", consentCol))
		}
		version = yesVersion
	case consentVersion:
		if utf8.RuneCountInString(version) > 40 {
			return bad("a versão do termo de consentimento tem mais de 40 letras", "the consent text version is longer than 40 characters")
		}
	default:
		return bad(fmt.Sprintf("a coluna %q não traz nem a versão do termo aceito (por exemplo v1 ou termo-2025-01) nem sim/não; corrija a célula", consentCol),
			fmt.Sprintf("column %q holds neither the version of the consent text agreed to (for example v1 or termo-2025-01) nor yes/no; fix the cell", consentCol))
	}
	switch {
	case row.LegalBasis == "" && version == "":
		return bad("sem consentimento do responsável nem outra base legal: a criança não foi importada",
			"no guardian consent and no other legal basis: the child was not imported")
	case row.LegalBasis == "":
		row.LegalBasis = "consent"
	}
	if row.LegalBasis == "consent" && version == "" {
		return bad("base legal consentimento sem a versão do termo aceito", "legal basis consent without the version of the consent text")
	}
	row.TextVersion = version
	if row.TextVersion == "" {
		row.TextVersion = NoTextVersion
	}
	for _, h := range []struct {
		dst   *string
		field Field
		max   int
	}{{&row.Allergies, FieldAllergies, 300}, {&row.MedicalNotes, FieldMedicalNotes, 500}} {
		t := squeeze(cell(h.field))
		switch {
		case utf8.RuneCountInString(t) > h.max:
			return bad(fmt.Sprintf("a coluna %q tem mais de %d letras", col(h.field), h.max), fmt.Sprintf("column %q has more than %d characters", col(h.field), h.max))
		case t != "" && pii.HoldsNumbers(t):
			return bad(fmt.Sprintf("a coluna %q parece trazer um telefone ou documento (CPF, RG); escreva só o que a turma precisa saber", col(h.field)),
				fmt.Sprintf("column %q looks like it holds a phone or document number (CPF, RG); write only what the class must know", col(h.field)))
		}
		*h.dst = t
	}
	return row, warns, nil
}

// fold is the comparison form of header names, class names, people's names and enumerated
// cells: accents removed, lower case, anything but letters and digits turned into single
// spaces. "Nome da Criança", "nome_da_crianca" and " NOME DA CRIANÇA " fold alike.
func fold(s string) string {
	// A chain keeps state between calls: one per call keeps fold safe for concurrent use.
	t, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
	if err != nil {
		t = s
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(t) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// squeeze trims s and collapses runs of white space to one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
