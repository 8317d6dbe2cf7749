package rosterimport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/encoding/charmap"
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

// Column documents one field: the header names it is recognized by (compared after folding:
// case, accents, punctuation and spacing ignored) and whether a file must have it.
type Column struct {
	Field    Field
	Required bool
	Aliases  []string
}

// Columns is the documented column list, in the order docs/onboarding.md gives it.
var Columns = []Column{
	{FieldChild, true, []string{"nome", "nome da criança", "criança", "nome completo", "name", "child", "child name", "child_name"}},
	{FieldBirthDate, true, []string{"nascimento", "data de nascimento", "data nascimento", "dt nascimento", "birth_date", "birth date", "birthdate", "date of birth"}},
	{FieldGuardian, true, []string{"responsável", "nome do responsável", "guardian", "guardian name", "guardian_name"}},
	{FieldPhone, true, []string{"telefone", "celular", "whatsapp", "fone", "telefone do responsável", "phone", "guardian phone", "guardian_phone"}},
	{FieldRelationship, false, []string{"parentesco", "relação", "vínculo", "relationship"}},
	{FieldConsent, false, []string{"consentimento", "versão do consentimento", "termo", "versão do termo", "consent", "consent version", "consent_version"}},
	{FieldLegalBasis, false, []string{"base legal", "legal basis", "legal_basis"}},
	{FieldClass, false, []string{"turma", "classe", "sala", "class"}},
	{FieldAllergies, false, []string{"alergias", "alergia", "allergies", "allergy"}},
	{FieldMedicalNotes, false, []string{"observações médicas", "observação médica", "observações de saúde", "saúde", "medical notes", "medical_notes", "health notes"}},
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

// Relationships maps the folded values of the relationship column to the schema's values;
// an empty cell is "other".
var Relationships = invert(map[string][]string{
	"mother":         {"mae", "mamae", "mother"},
	"father":         {"pai", "papai", "father"},
	"grandparent":    {"avo", "vo", "avos", "grandparent", "grandmother", "grandfather"},
	"legal_guardian": {"responsavel legal", "responsavel", "tutor", "tutora", "guardiao", "guardia", "legal guardian"},
	"other":          {"outro", "outra", "other", "tio", "tia", "irmao", "irma", "padrasto", "madrasta", "padrinho", "madrinha"},
})

// LegalBases maps the folded values of the legal-basis column to the schema's values.
var LegalBases = invert(map[string][]string{
	"consent":             {"consentimento", "consent"},
	"legal_obligation":    {"obrigacao legal", "legal obligation"},
	"legitimate_interest": {"legitimo interesse", "legitimate interest"},
})

func invert(m map[string][]string) map[string]string {
	out := map[string]string{}
	for v, keys := range m {
		for _, k := range keys {
			out[k] = v
		}
	}
	return out
}

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

// Row is a valid row of the file, normalized.
type Row struct {
	Line         int
	ChildName    string
	BirthDate    time.Time // a date at UTC midnight
	GuardianName string
	Phone        string // E.164
	Relationship string // the schema's value
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
	// Encoding is "UTF-8" or "Windows-1252"; Separator the column separator.
	Encoding  string
	Separator rune
	// Columns maps each recognized field to the header cell it came from; Ignored lists the
	// header cells that match no field (header names are not personal data).
	Columns map[Field]string
	Ignored []string
	Rows    []Row
	Refused []Refusal
	// Lines is the number of data rows read (blank rows not counted).
	Lines int
}

// Limits of a roster file.
const (
	MaxFileBytes = 64 << 20
	MaxRows      = 100_000
)

// Parse reads a roster file. It returns a *FileError when the file as a whole cannot be
// imported (encoding, header, size); rows it cannot accept are in File.Refused.
func Parse(r io.Reader, today time.Time) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	if len(raw) > MaxFileBytes {
		return nil, fileError(fmt.Sprintf("o arquivo passa de %d MiB; divida-o em partes", MaxFileBytes>>20),
			fmt.Sprintf("the file is larger than %d MiB; split it", MaxFileBytes>>20))
	}
	f := &File{Encoding: "UTF-8", Columns: map[Field]string{}}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	text := string(raw)
	if !utf8.Valid(raw) {
		dec, err := charmap.Windows1252.NewDecoder().Bytes(raw)
		if err != nil {
			return nil, fileError("o arquivo não está em UTF-8 nem em Windows-1252", "the file is neither UTF-8 nor Windows-1252")
		}
		text, f.Encoding = string(dec), "Windows-1252"
	}
	f.Separator = detectSeparator(text)
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = f.Separator
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false

	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fileError("o arquivo está vazio", "the file is empty")
	}
	if err != nil {
		return nil, csvError(err)
	}
	index := map[Field]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
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
	var missing []string
	for _, c := range Columns {
		if _, ok := index[c.Field]; c.Required && !ok {
			missing = append(missing, fmt.Sprintf("%q", c.Aliases[0]))
		}
	}
	if len(missing) > 0 {
		return nil, fileError("faltam colunas no cabeçalho: "+strings.Join(missing, ", ")+" (veja a lista de nomes aceitos em docs/onboarding.md)",
			"the header lacks columns: "+strings.Join(missing, ", ")+" (docs/onboarding.md lists the accepted names)")
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				f.Lines++
				f.Refused = append(f.Refused, refuse(pe.StartLine, "a linha não pôde ser lida (aspas sem fechar?)", "the line could not be read (an unclosed quote?)"))
				continue
			}
			return nil, csvError(err)
		}
		if blank(rec) {
			continue
		}
		f.Lines++
		if f.Lines > MaxRows {
			return nil, fileError(fmt.Sprintf("o arquivo tem mais de %d linhas; divida-o em partes", MaxRows),
				fmt.Sprintf("the file has more than %d rows; split it", MaxRows))
		}
		cell := func(fl Field) string {
			i, ok := index[fl]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		row, bad := parseRow(line, cell, today)
		if bad != nil {
			f.Refused = append(f.Refused, *bad)
			continue
		}
		f.Rows = append(f.Rows, row)
	}
	return f, nil
}

func csvError(err error) error {
	return fileError("o arquivo não pôde ser lido como CSV", "the file could not be read as CSV: "+err.Error())
}

// earliestBirth is the schema's lower bound of children.birth_date.
var earliestBirth = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

func parseRow(line int, cell func(Field) string, today time.Time) (Row, *Refusal) {
	bad := func(pt, en string) (Row, *Refusal) {
		r := refuse(line, pt, en)
		return Row{}, &r
	}
	row := Row{Line: line, ChildName: squeeze(cell(FieldChild)), GuardianName: squeeze(cell(FieldGuardian)), Class: squeeze(cell(FieldClass))}
	switch n := utf8.RuneCountInString(row.ChildName); {
	case n == 0:
		return bad("falta o nome da criança", "the child's name is missing")
	case n < 2 || n > 120:
		return bad("o nome da criança deve ter de 2 a 120 letras", "the child's name must have 2 to 120 characters")
	}
	birth, reason := parseDate(cell(FieldBirthDate))
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
	phone, reason := parsePhone(cell(FieldPhone))
	if reason != nil {
		return bad(reason.PT, reason.EN)
	}
	row.Phone = phone
	rel := fold(cell(FieldRelationship))
	if rel == "" {
		row.Relationship = "other"
	} else if row.Relationship = Relationships[rel]; row.Relationship == "" {
		return bad("parentesco desconhecido; use mãe, pai, avó, avô, responsável legal ou outro",
			"unknown relationship; use mother, father, grandparent, legal guardian or other")
	}
	version, basis := cell(FieldConsent), fold(cell(FieldLegalBasis))
	switch fold(version) {
	case "nao", "no", "n", "false", "0", "-":
		version = ""
	case "sim", "yes", "s", "y", "x", "true", "1", "ok":
		return bad("a coluna de consentimento deve trazer a versão do termo aceito (por exemplo v1 ou 2024-01), não sim/não",
			"the consent column must carry the version of the consent text agreed to (for example v1 or 2024-01), not yes/no")
	}
	if utf8.RuneCountInString(version) > 40 {
		return bad("a versão do termo de consentimento tem mais de 40 letras", "the consent text version is longer than 40 characters")
	}
	switch {
	case basis == "" && version == "":
		return bad("sem consentimento do responsável nem outra base legal: a criança não foi importada",
			"no guardian consent and no other legal basis: the child was not imported")
	case basis == "":
		row.LegalBasis = "consent"
	default:
		if row.LegalBasis = LegalBases[basis]; row.LegalBasis == "" {
			return bad("base legal desconhecida; use consentimento, obrigação legal ou legítimo interesse",
				"unknown legal basis; use consent, legal obligation or legitimate interest")
		}
	}
	if row.LegalBasis == "consent" && version == "" {
		return bad("base legal consentimento sem a versão do termo aceito", "legal basis consent without the version of the consent text")
	}
	row.TextVersion = version
	if row.TextVersion == "" {
		row.TextVersion = NoTextVersion
	}
	for _, h := range []struct {
		dst       *string
		field     Field
		max       int
		namePT, n string
	}{{&row.Allergies, FieldAllergies, 300, "alergias", "allergies"}, {&row.MedicalNotes, FieldMedicalNotes, 500, "observações médicas", "medical notes"}} {
		t := strings.Join(strings.Fields(cell(h.field)), " ")
		switch {
		case utf8.RuneCountInString(t) > h.max:
			return bad(fmt.Sprintf("a coluna %s tem mais de %d letras", h.namePT, h.max), fmt.Sprintf("the %s column has more than %d characters", h.n, h.max))
		case t != "" && pii.HoldsNumbers(t):
			return bad(fmt.Sprintf("a coluna %s parece trazer um telefone ou documento (CPF, RG); escreva só o que a turma precisa saber", h.namePT),
				fmt.Sprintf("the %s column looks like it holds a phone or document number (CPF, RG); write only what the class must know", h.n))
		}
		*h.dst = t
	}
	return row, nil
}

var (
	dmyRE = regexp.MustCompile(`^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2}|\d{4})$`)
	isoRE = regexp.MustCompile(`^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$`)
)

// parseDate reads DD/MM/AAAA (also with - or . and without leading zeros) and AAAA-MM-DD; a
// time of day after the date (a spreadsheet's "15/03/2018 00:00:00") is ignored.
func parseDate(s string) (time.Time, *Reason) {
	if s == "" {
		return time.Time{}, &Reason{"falta a data de nascimento", "the birth date is missing"}
	}
	s, _, _ = strings.Cut(s, " ")
	if i := strings.IndexByte(s, 'T'); i == 10 {
		s = s[:i]
	}
	var y, m, d int
	if p := isoRE.FindStringSubmatch(s); p != nil {
		y, m, d = atoi(p[1]), atoi(p[2]), atoi(p[3])
	} else if p := dmyRE.FindStringSubmatch(s); p != nil {
		if len(p[3]) == 2 {
			return time.Time{}, &Reason{"a data de nascimento tem o ano com 2 dígitos; escreva os 4 (DD/MM/AAAA)", "the birth date has a 2-digit year; write all 4 (DD/MM/YYYY)"}
		}
		d, m, y = atoi(p[1]), atoi(p[2]), atoi(p[3])
	} else {
		return time.Time{}, &Reason{"data de nascimento ilegível; use DD/MM/AAAA", "unreadable birth date; use DD/MM/YYYY"}
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return time.Time{}, &Reason{"a data de nascimento não existe no calendário", "the birth date does not exist in the calendar"}
	}
	return t, nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// parsePhone normalizes a phone number, Brazilian unless it starts with +country, to E.164.
func parsePhone(s string) (string, *Reason) {
	if s == "" {
		return "", &Reason{"falta o telefone do responsável", "the guardian's phone is missing"}
	}
	n, err := phonenumbers.Parse(s, "BR")
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", &Reason{"telefone inválido; escreva com DDD, por exemplo (11) 98765-4321", "invalid phone number; include the area code, for example (11) 98765-4321"}
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
}

// detectSeparator picks the most frequent of ; , and tab on the first non-blank line, outside
// quotes; comma when none appears.
func detectSeparator(text string) rune {
	line := text
	for _, l := range strings.SplitN(text, "\n", 20) {
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	counts := map[rune]int{}
	quoted := false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case !quoted && (r == ';' || r == ',' || r == '\t'):
			counts[r]++
		}
	}
	best := ','
	for _, r := range []rune{';', '\t'} {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return best
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
