package rosterimport

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
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

// RosterSchema is the roster file's [Schema]: [Columns], a last-name column beside its
// first-name column.
var RosterSchema = NewSchema(Columns, [][2]Field{{FieldChildLast, FieldChild}, {FieldGuardianLast, FieldGuardian}}, nil)

// aliasIndex maps the folded header names of the roster to their fields.
var aliasIndex = RosterSchema.aliases

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

// Parse reads a roster file. It returns a *FileError when the file as a whole cannot be
// imported (encoding, header, size, date order); rows it cannot accept are in File.Refused.
func Parse(r io.Reader, today time.Time, opts ParseOptions) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	region, err := checkRegion(opts.DefaultCountry)
	if err != nil {
		return nil, err
	}
	if err := CheckDateOrder(opts.DateOrder); err != nil {
		return nil, err
	}
	t, err := ReadTable(raw, RosterSchema)
	if err != nil {
		return nil, err
	}
	f := &File{Encoding: t.Encoding, Separator: t.Separator, HeaderRow: t.HeaderRow, Columns: t.Columns, Ignored: t.Ignored,
		Refused: t.Refused, Warnings: t.Warnings, Lines: t.Lines}
	colName := func(fl Field) string { return f.Columns[fl] }

	// The order of the day/month dates: given, or decided by the values.
	f.DateOrder = opts.DateOrder
	if f.DateOrder == "" {
		births := DateColumn{Name: colName(FieldBirthDate)}
		for _, row := range t.Rows {
			births.Cells, births.Rows = append(births.Cells, row.Cell(FieldBirthDate)), append(births.Rows, row.Line)
		}
		if f.DateOrder, err = DetectDateOrder(births); err != nil {
			return nil, err
		}
	}

	for _, tr := range t.Rows {
		row, warns, bad := parseRow(tr.Line, tr.Cell, colName, today, f.DateOrder, region, opts.ConsentVersion)
		if bad != nil {
			f.Refused = append(f.Refused, *bad)
			continue
		}
		f.Warnings = append(f.Warnings, warns...)
		f.Rows = append(f.Rows, row)
	}
	// The table's refusals and warnings come first: put everything in row order (a row's
	// encoding warning stays before its own).
	slices.SortStableFunc(f.Refused, func(a, b Refusal) int { return a.Line - b.Line })
	slices.SortStableFunc(f.Warnings, func(a, b Warning) int { return a.Line - b.Line })
	return f, nil
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
	t := s // ASCII text is its own NFD and NFC and has no combining mark
	if !isASCII(s) {
		c := foldChains.Get().(transform.Transformer)
		var err error
		if t, _, err = transform.String(c, s); err != nil {
			t = s
		}
		foldChains.Put(c)
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

// foldChains are fold's transformers. A chain keeps state between calls, so one is used by
// one call at a time (transform.String resets it first); making one per call cost 8 KB of
// buffers, 3.7 MB at package init alone (the headers' aliases are folded when the package
// starts).
var foldChains = sync.Pool{New: func() any {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Fold is the comparison form of names and enumerated cells (see fold), for the other
// importers, so that every import compares a name as the roster's does.
func Fold(s string) string { return fold(s) }

// squeeze trims s and collapses runs of white space to one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// Squeeze trims s and collapses runs of white space to one space.
func Squeeze(s string) string { return squeeze(s) }

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
