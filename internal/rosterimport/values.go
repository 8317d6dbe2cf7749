package rosterimport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// Date orders of the day/month/year dates of a file (--date-order).
const (
	OrderDMY = "dmy"
	OrderMDY = "mdy"
	OrderYMD = "ymd"
)

var (
	slashRE  = regexp.MustCompile(`^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2}|\d{4})$`)
	isoRE    = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$`)
	serialRE = regexp.MustCompile(`^(\d{5})(?:[.,]\d+)?$`)
)

// dateText drops a time of day after the date ("15/03/2018 00:00:00", "2018-03-15T00:00").
func dateText(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	if i := strings.IndexByte(s, 'T'); i == 10 {
		s = s[:i]
	}
	return s
}

// CheckDateOrder validates a --date-order value: OrderDMY, OrderMDY, OrderYMD, or empty
// (detected from the values).
func CheckDateOrder(order string) error {
	switch order {
	case "", OrderDMY, OrderMDY, OrderYMD:
		return nil
	}
	return fmt.Errorf("--date-order %q: use dmy, mdy or ymd", order)
}

// DateColumn is one date column of a file, for [DetectDateOrder]: its header name, its cells
// and the spreadsheet rows they are on.
type DateColumn struct {
	Name  string
	Cells []string
	Rows  []int
}

// DetectDateOrder decides the order of a file's dd/mm/yyyy-like dates from the values of its
// date columns (a birth date and a service date share the file's order): a first part above
// 12 means day first, a second part above 12 month first. Values of both kinds, or only
// values that fit both orders, make a file error: the operator gives --date-order. A file
// without such dates is day first.
func DetectDateOrder(cols ...DateColumn) (string, error) {
	type seen struct {
		col string
		row int
	}
	var dmy, mdy seen
	var ambiguous []string
	for _, col := range cols {
		amb := false
		for i, c := range col.Cells {
			p := slashRE.FindStringSubmatch(dateText(c))
			if p == nil || len(p[3]) != 4 {
				continue
			}
			a, b := atoi(p[1]), atoi(p[2])
			switch {
			case a > 12 && b <= 12:
				if dmy.row == 0 {
					dmy = seen{col.Name, col.Rows[i]}
				}
			case b > 12 && a <= 12:
				if mdy.row == 0 {
					mdy = seen{col.Name, col.Rows[i]}
				}
			case a <= 12 && b <= 12:
				amb = true
			}
		}
		if amb {
			ambiguous = append(ambiguous, col.Name)
		}
	}
	switch {
	case dmy.row > 0 && mdy.row > 0 && dmy.col == mdy.col:
		return "", fileError(fmt.Sprintf("a coluna %q tem datas com o dia primeiro (linha %d) e com o mês primeiro (linha %d); corrija-as ou diga a ordem com --date-order dmy ou mdy", dmy.col, dmy.row, mdy.row),
			fmt.Sprintf("column %q has dates day first (row %d) and month first (row %d); fix them or give the order with --date-order dmy or mdy", dmy.col, dmy.row, mdy.row))
	case dmy.row > 0 && mdy.row > 0:
		return "", fileError(fmt.Sprintf("a coluna %q tem datas com o dia primeiro (linha %d) e a coluna %q com o mês primeiro (linha %d); corrija-as ou diga a ordem com --date-order dmy ou mdy", dmy.col, dmy.row, mdy.col, mdy.row),
			fmt.Sprintf("column %q has dates day first (row %d) and column %q month first (row %d); fix them or give the order with --date-order dmy or mdy", dmy.col, dmy.row, mdy.col, mdy.row))
	case dmy.row > 0:
		return OrderDMY, nil
	case mdy.row > 0:
		return OrderMDY, nil
	case len(ambiguous) == 1:
		return "", fileError(fmt.Sprintf("as datas da coluna %q servem tanto com o dia primeiro quanto com o mês primeiro (nenhum dia passa de 12); diga a ordem com --date-order dmy (dia/mês/ano) ou mdy (mês/dia/ano)", ambiguous[0]),
			fmt.Sprintf("the dates of column %q fit both day first and month first (no day is above 12); give the order with --date-order dmy (day/month/year) or mdy (month/day/year)", ambiguous[0]))
	case len(ambiguous) > 1:
		return "", fileError(fmt.Sprintf("as datas das colunas %s servem tanto com o dia primeiro quanto com o mês primeiro (nenhum dia passa de 12); diga a ordem com --date-order dmy (dia/mês/ano) ou mdy (mês/dia/ano)", quoteAll(ambiguous)),
			fmt.Sprintf("the dates of columns %s fit both day first and month first (no day is above 12); give the order with --date-order dmy (day/month/year) or mdy (month/day/year)", quoteAll(ambiguous)))
	}
	return OrderDMY, nil
}

// excelEpoch is day 0 of Excel's 1900 date system, as its serial numbers count after
// February 1900 (Excel counts a 29 February 1900 that did not exist).
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// DateNoun names the dates of a column in the reasons [ParseDate] gives, in Portuguese (a
// feminine noun: "data de nascimento") and English ("birth date").
type DateNoun struct{ PT, EN string }

// NounBirthDate is the birth date's [DateNoun].
var NounBirthDate = DateNoun{"data de nascimento", "birth date"}

// parseDate reads a birth date (see [ParseDate]).
func parseDate(s, order string) (time.Time, *Reason) { return ParseDate(s, order, NounBirthDate) }

// ParseDate reads a date: yyyy-mm-dd (also / or .), dd/mm/yyyy or mm/dd/yyyy (also - or .,
// leading zeros optional) in the file's order, or an Excel serial date (43831 is
// 2020-01-01); a time after the date is ignored. 2-digit years are refused. The reasons name
// the date by noun. The date is at UTC midnight.
func ParseDate(s, order string, noun DateNoun) (time.Time, *Reason) {
	if strings.TrimSpace(s) == "" {
		return time.Time{}, &Reason{"falta a " + noun.PT, "the " + noun.EN + " is missing"}
	}
	s = dateText(s)
	var y, m, d int
	switch p := slashRE.FindStringSubmatch(s); {
	case isoRE.MatchString(s):
		p := isoRE.FindStringSubmatch(s)
		y, m, d = atoi(p[1]), atoi(p[2]), atoi(p[3])
	case p != nil:
		if len(p[3]) == 2 {
			return time.Time{}, &Reason{"a " + noun.PT + " tem o ano com 2 dígitos; escreva os 4 (DD/MM/AAAA)", "the " + noun.EN + " has a 2-digit year; write all 4 (DD/MM/YYYY)"}
		}
		switch order {
		case OrderMDY:
			m, d, y = atoi(p[1]), atoi(p[2]), atoi(p[3])
		case OrderYMD:
			return time.Time{}, &Reason{"a " + noun.PT + " não está como AAAA-MM-DD, a ordem dada em --date-order ymd", "the " + noun.EN + " is not YYYY-MM-DD, the order --date-order ymd gives"}
		default:
			d, m, y = atoi(p[1]), atoi(p[2]), atoi(p[3])
		}
	case serialRE.MatchString(s):
		return excelEpoch.AddDate(0, 0, atoi(serialRE.FindStringSubmatch(s)[1])), nil
	default:
		return time.Time{}, &Reason{noun.PT + " ilegível; use DD/MM/AAAA", "unreadable " + noun.EN + "; use DD/MM/YYYY"}
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Year() != y || int(t.Month()) != m || t.Day() != d {
		what := map[string][2]string{OrderMDY: {"MM/DD/AAAA", "MM/DD/YYYY"}, OrderDMY: {"DD/MM/AAAA", "DD/MM/YYYY"}}[order]
		if what[0] == "" {
			what = [2]string{"DD/MM/AAAA", "DD/MM/YYYY"}
		}
		return time.Time{}, &Reason{"a " + noun.PT + " não existe no calendário (lida como " + what[0] + ")", "the " + noun.EN + " does not exist in the calendar (read as " + what[1] + ")"}
	}
	return t, nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// DefaultCountry is the country of a phone number written without + when none is given
// (--default-country): Brazil.
const DefaultCountry = "BR"

// checkRegion validates --default-country: an ISO 3166 code phonenumbers knows.
func checkRegion(region string) (string, error) {
	r := strings.ToUpper(strings.TrimSpace(region))
	if r == "" {
		r = DefaultCountry
	}
	if phonenumbers.GetCountryCodeForRegion(r) == 0 {
		return "", fmt.Errorf("--default-country %q: give an ISO 3166 country code (BR, US, PT, ...)", region)
	}
	return r, nil
}

// parsePhone normalizes a phone number to E.164. A number without + is a number of region
// (--default-country) and must be valid there: it is never moved to another country. Its
// first group of digits, when it is written in groups, must be the region's area code
// (a "(415) 555-0132" is not a Brazilian "(41) 5555-0132"). In Brazil an 8-digit mobile of
// before 2016 (area code, then 6 to 9 and 7 digits) gets the 9 every mobile has had since
// (ANATEL): nine reports it.
func parsePhone(s, region string) (e164 string, nine bool, reason *Reason) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false, &Reason{"falta o telefone do responsável", "the guardian's phone is missing"}
	}
	invalid := func() (string, bool, *Reason) {
		if region == "BR" {
			return "", false, &Reason{"telefone inválido para o Brasil (o país padrão); escreva com DDD, por exemplo (11) 98765-4321, ou com + e o código do país se for de outro país (--default-country muda o padrão)",
				"invalid phone number for Brazil (the default country); include the area code, for example (11) 98765-4321, or write + and the country code if it is from another country (--default-country changes the default)"}
		}
		return "", false, &Reason{fmt.Sprintf("telefone inválido para %s (o país padrão, --default-country); escreva-o com + e o código do país se for de outro país", region),
			fmt.Sprintf("invalid phone number for %s (the default country, --default-country); write + and the country code if it is from another country", region)}
	}
	plus := strings.HasPrefix(s, "+")
	n, err := phonenumbers.Parse(s, region)
	if err != nil {
		return invalid()
	}
	if !plus && region == "BR" && !phonenumbers.IsValidNumber(n) {
		nsn := phonenumbers.GetNationalSignificantNumber(n)
		if len(nsn) == 10 && nsn[2] >= '6' && nsn[2] <= '9' {
			if m, err := phonenumbers.Parse("+55"+nsn[:2]+"9"+nsn[2:], "BR"); err == nil && phonenumbers.IsValidNumber(m) &&
				phonenumbers.GetNumberType(m) == phonenumbers.MOBILE {
				n, nine = m, true
			}
		}
	}
	if !phonenumbers.IsValidNumber(n) || (!plus && !phonenumbers.IsValidNumberForRegion(n, region)) {
		return invalid()
	}
	if !nine && !areaCodeGrouping(s, n) {
		return "", false, &Reason{fmt.Sprintf("o primeiro grupo de dígitos do telefone não é um DDD de %s (o país padrão); se o número for de outro país, escreva-o com + e o código do país", regionName(region)),
			fmt.Sprintf("the phone's first group of digits is not an area code of %s (the default country); if the number is from another country, write it with + and the country code", regionName(region))}
	}
	return phonenumbers.Format(n, phonenumbers.E164), nine, nil
}

// ParsePhone is the importer's reading of a phone number (see parsePhone), for the other
// writers of a guardian's phone (neemias_guardian_correct): region is an ISO 3166 code, empty
// for [DefaultCountry]; an unknown region is refused as an invalid number.
func ParsePhone(s, region string) (e164 string, nine bool, reason *Reason) {
	r, err := checkRegion(region)
	if err != nil {
		return "", false, &Reason{err.Error(), err.Error()}
	}
	return parsePhone(s, r)
}

// SamePerson reports whether two guardian names are one person's by the importer's rule (see
// samePerson): folded alike, or the same first and last name.
func SamePerson(a, b string) bool { return samePerson(a, b) }

func regionName(r string) string {
	if r == "BR" {
		return "BR (Brasil / Brazil)"
	}
	return r
}

// areaCodeGrouping reports whether the digit groups of s agree with n's area code: the first
// group after the country code or trunk prefix is the national destination code, or holds
// it with most of the subscriber number (digits written without grouping).
func areaCodeGrouping(s string, n *phonenumbers.PhoneNumber) bool {
	ndc := phonenumbers.GetLengthOfNationalDestinationCode(n)
	if ndc == 0 {
		return true
	}
	var digits strings.Builder
	var ends []int // digit count at the end of each group
	in := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
			in = true
		} else if in {
			ends = append(ends, digits.Len())
			in = false
		}
	}
	total := digits.Len()
	nsn := phonenumbers.GetNationalSignificantNumber(n)
	prefix := total - len(nsn)
	if prefix < 0 || !strings.HasSuffix(digits.String(), nsn) {
		return true // an extension or another form phonenumbers understood: nothing to compare
	}
	for _, e := range ends {
		if e <= prefix {
			continue
		}
		if e >= total {
			return true
		}
		first := e - prefix
		return first == ndc || first >= ndc+4
	}
	return true
}

// particles stay lower-case inside a title-cased name.
var particles = map[string]bool{"de": true, "da": true, "do": true, "dos": true, "das": true, "e": true}

// normalizeName squeezes spaces, reads "Souza, Ana Clara" as "Ana Clara Souza" and
// title-cases a name written in capitals only ("ANA DE SOUZA" is "Ana de Souza").
func normalizeName(s string) string {
	s = squeeze(s)
	if strings.Count(s, ",") == 1 {
		last, first, _ := strings.Cut(s, ",")
		if last, first = squeeze(last), squeeze(first); nameLike(last) && nameLike(first) {
			s = first + " " + last
		}
	}
	if !hasLetter(s) || strings.ToUpper(s) != s {
		return s
	}
	words := strings.Fields(strings.ToLower(s))
	for i, w := range words {
		if i > 0 && particles[w] {
			continue
		}
		words[i] = capitalize(w)
	}
	return strings.Join(words, " ")
}

// NormalizeName is a name as the roster stores it: spaces squeezed, "Souza, Ana Clara" read
// as "Ana Clara Souza", a name in capitals only title-cased (see normalizeName).
func NormalizeName(s string) string { return normalizeName(s) }

// capitalize upper-cases the first letter of w and of each part after a hyphen or an
// apostrophe ("d'ávila" is "D'Ávila", "ana-clara" "Ana-Clara").
func capitalize(w string) string {
	var b strings.Builder
	up := true
	for _, r := range w {
		if up && unicode.IsLetter(r) {
			b.WriteRune(unicode.ToUpper(r))
			up = false
			continue
		}
		b.WriteRune(r)
		if r == '-' || r == '\'' || r == '’' {
			up = true
		}
	}
	return b.String()
}

// nameLike: every word starts with a capital, but the particles after the first word ("Ana
// Clara", "Dos Santos", "Maria de Souza"; not "a Pequena").
func nameLike(s string) bool {
	words := strings.Fields(s)
	for i, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && !(i > 0 && particles[strings.ToLower(w)]) {
			return false
		}
	}
	return len(words) > 0
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// nameWords are a name's folded words without the particles.
func nameWords(name string) []string {
	var out []string
	for _, w := range strings.Fields(fold(name)) {
		if _, p := particles[w]; !p {
			out = append(out, w)
		}
	}
	return out
}

// samePerson is the guardian-name rule: two names are one person's when they fold alike, or
// when both have a first and a last name and those agree ("Rosa Corrigida" and "Rosa Maria
// Corrigida"; not "Rosa Corrigida" and "Rosa Lima").
func samePerson(a, b string) bool {
	if fold(a) == fold(b) {
		return true
	}
	wa, wb := nameWords(a), nameWords(b)
	return len(wa) >= 2 && len(wb) >= 2 && wa[0] == wb[0] && wa[len(wa)-1] == wb[len(wb)-1]
}

// betterName reports whether the spelling next should replace current: it has more words
// (the fuller name), or the same words with more accents, or proper case where current is
// in capitals only. Otherwise the stored spelling stays, so two sheets that spell a person
// differently do not flip the record on every import.
func betterName(current, next string) bool {
	if current == next {
		return false
	}
	wc, wn := len(nameWords(current)), len(nameWords(next))
	if wn != wc {
		return wn > wc
	}
	if fold(current) != fold(next) {
		return false
	}
	if ac, an := accents(current), accents(next); ac != an {
		return an > ac
	}
	return strings.ToUpper(current) == current && strings.ToUpper(next) != next
}

func accents(s string) int {
	n := 0
	for _, r := range s {
		if r >= utf8.RuneSelf && unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// The kinds of a consent cell.
type consentKind int

const (
	consentEmpty consentKind = iota
	consentNo                // no, pending, refused
	consentYes               // yes, without saying which text
	consentVersion
	consentUnreadable
)

var (
	// Words that make a consent cell mean no, pending or refused (folded).
	consentNoWords = map[string]bool{
		"nao": true, "n": true, "no": true, "not": true, "pendente": true, "pending": true, "recusado": true, "recusada": true,
		"recusou": true, "refused": true, "declined": true, "denied": true, "negado": true, "negada": true, "falta": true,
		"faltando": true, "aguardando": true, "awaiting": true, "sem": true, "without": true, "nunca": true, "never": true,
		"unsigned": true, "false": true, "0": true, "nenhum": true, "none": true, "revogado": true, "revoked": true, "missing": true,
	}
	// Cells that mean yes (folded), and first words that do ("Sim, autorizo ...").
	consentYesWords = map[string]bool{
		"sim": true, "s": true, "yes": true, "y": true, "x": true, "ok": true, "true": true, "1": true, "assinado": true,
		"assinada": true, "assinou": true, "autorizo": true, "autorizado": true, "autorizada": true, "aceito": true, "aceite": true,
		"concordo": true, "signed": true, "agreed": true, "agree": true, "accepted": true, "accept": true, "consinto": true, "i agree": true,
	}
	consentMarks = "✓✔☑✅"
	digitRE      = regexp.MustCompile(`\d`)
	// compiled on first use, not at every start of every command (the Unicode letter and
	// number classes: 0.15 ms, 100 kB)
	versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._/:-]*$`) })
)

// classifyConsent reads a consent cell. A word meaning no, pending or refused anywhere in the
// cell makes it "no" ("Não autorizo", "Falta assinar"); a cell that means yes without naming a
// text is "yes"; a version is one word with a digit (v1, 2025-01, termo-2025); anything else
// is unreadable.
func classifyConsent(cell string) consentKind {
	c := strings.TrimSpace(cell)
	if c == "" {
		return consentEmpty
	}
	if strings.ContainsAny(c, consentMarks) && !hasLetter(c) {
		return consentYes
	}
	f := fold(c)
	words := strings.Fields(f)
	for _, w := range words {
		if consentNoWords[w] {
			return consentNo
		}
	}
	if c == "-" || c == "—" {
		return consentNo
	}
	if consentYesWords[f] || (len(words) > 0 && consentYesWords[words[0]] && !digitRE.MatchString(c)) {
		return consentYes
	}
	if versionRE().MatchString(c) && digitRE.MatchString(c) {
		return consentVersion
	}
	return consentUnreadable
}

func invert(m map[string][]string) map[string]string {
	out := map[string]string{}
	for v, keys := range m {
		for _, k := range keys {
			out[fold(k)] = v
		}
	}
	return out
}

// Relationships maps the folded values of the relationship column to the schema's values. An
// empty cell says nothing (a new link is "other", an existing one keeps its value); a word
// not in the list is "other" for a new link, with a warning.
var Relationships = invert(map[string][]string{
	"mother": {"mãe", "mae", "mamãe", "mamae", "mãe biológica", "mãe adotiva", "mother", "mom", "mum", "mommy", "mama", "birth mother", "adoptive mother"},
	"father": {"pai", "papai", "pai biológico", "pai adotivo", "father", "dad", "daddy", "papa", "birth father", "adoptive father"},
	"grandparent": {"avó", "avô", "vó", "vô", "vovó", "vovô", "avós", "avó materna", "avó paterna", "avô materno", "avô paterno", "bisavó", "bisavô",
		"grandparent", "grandmother", "grandfather", "grandma", "grandpa", "granny", "grandparents", "great grandmother", "great grandfather",
		"maternal grandmother", "paternal grandmother", "maternal grandfather", "paternal grandfather"},
	"legal_guardian": {"responsável legal", "responsável", "tutor", "tutora", "tutor legal", "tutora legal", "guardião", "guardiã", "guardião legal",
		"guardiã legal", "curador", "curadora", "legal guardian", "guardian", "custodian"},
	"other": {"outro", "outra", "outros", "other", "tio", "tia", "tio avô", "tia avó", "irmão", "irmã", "padrasto", "madrasta", "padrinho", "madrinha",
		"primo", "prima", "babá", "família acolhedora", "stepfather", "stepmother", "stepdad", "stepmom", "step father", "step mother", "aunt", "uncle",
		"brother", "sister", "sibling", "godmother", "godfather", "cousin", "nanny", "babysitter", "foster parent", "foster mother", "foster father",
		"family friend", "amigo da família", "amiga da família"},
})

// LegalBases maps the folded values of the legal-basis column to the schema's values.
var LegalBases = invert(map[string][]string{
	"consent":             {"consentimento", "consent"},
	"legal_obligation":    {"obrigação legal", "legal obligation", "legal_obligation"},
	"legitimate_interest": {"legítimo interesse", "legitimate interest", "legitimate_interest"},
})
