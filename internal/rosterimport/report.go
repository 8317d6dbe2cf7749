package rosterimport

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteText writes the report for the operator, in Portuguese and English: what was (or
// would be) created, updated and left alone, and every refused row with its line and reason.
// It names columns, row numbers and reasons only: never a cell's content (a name, a date, a
// phone, free text), the classes included.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	mode := "importação / import"
	if r.DryRun {
		mode = "simulação (--dry-run), nada foi gravado / dry run (--dry-run), nothing was written"
	} else if !r.Committed {
		mode = "recusada, nada foi gravado / refused, nothing was written"
	}
	fmt.Fprintf(&b, "Igreja / church: %s — %s\n", r.Church, mode)
	fmt.Fprintf(&b, "Arquivo / file: %s, %s", r.Encoding, SeparatorName(r.Separator).In(""))
	if order := DateOrderName(r.DateOrder); order.PT != "" {
		fmt.Fprintf(&b, ", datas / dates %s", order.In(""))
	}
	b.WriteString("\n")
	if r.HeaderRow > 1 {
		fmt.Fprintf(&b, "Cabeçalho na linha %d; as linhas acima foram ignoradas / header on row %d; the rows above it were skipped\n", r.HeaderRow, r.HeaderRow)
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, "Colunas ignoradas / ignored columns: %s\n", quoteAll(r.Ignored))
	}
	fmt.Fprintf(&b, "Linhas lidas / rows read: %d; importadas / imported: %d; recusadas / refused: %d\n", r.Lines, r.Imported, len(r.Refused))
	row := func(label string, c Counts) {
		fmt.Fprintf(&b, "  %-36s novas/created %5d   atualizadas/updated %5d   sem mudança/unchanged %5d\n", label, c.Created, c.Updated, c.Unchanged)
	}
	row("crianças / children", r.Children)
	row("responsáveis / guardians", r.Guardians)
	row("vínculos / guardian links", r.Links)
	fmt.Fprintf(&b, "  %-36s novos/recorded %5d\n", "consentimentos / consent records", r.Consents)
	if r.Unplaced > 0 {
		fmt.Fprintf(&b, "  %-36s %d (nenhuma turma cobre a idade / no class covers the age; neemias-mcp class add)\n", "sem turma / not placed in a class", r.Unplaced)
	}
	if len(r.Refused) > 0 {
		b.WriteString("Linhas recusadas / refused rows:\n")
		for _, f := range r.Refused {
			fmt.Fprintf(&b, "  linha/line %d: %s / %s\n", f.Line, f.PT, f.EN)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "Avisos / warnings: %d\n", len(r.Warnings))
		var order []string
		lines := map[string][]string{}
		text := map[string]Reason{}
		for _, w := range r.Warnings {
			if _, ok := text[w.EN]; !ok {
				order = append(order, w.EN)
				text[w.EN] = w.Reason
			}
			lines[w.EN] = append(lines[w.EN], strconv.Itoa(w.Line))
		}
		for _, k := range order {
			fmt.Fprintf(&b, "  linhas/rows %s: %s / %s\n", strings.Join(lines[k], ", "), text[k].PT, text[k].EN)
		}
	}
	fmt.Fprintf(&b, "Tempo / time: %s\n", r.Elapsed.Round(time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// In is the reason in one language: lang "pt" or "en"; anything else gives both, "PT / EN"
// (the reports' default).
func (r Reason) In(lang string) string {
	switch lang {
	case "pt":
		return r.PT
	case "en":
		return r.EN
	}
	return r.PT + " / " + r.EN
}

// SeparatorName names a file's separator in both languages (empty for an unknown one).
func SeparatorName(sep rune) Reason {
	return map[rune]Reason{',': {"vírgula", "comma"}, ';': {"ponto e vírgula", "semicolon"}, '\t': {"tabulação", "tab"}}[sep]
}

// DateOrderName names a date order in both languages (empty for none).
func DateOrderName(order string) Reason {
	return map[string]Reason{OrderDMY: {"dia/mês/ano", "day/month/year"}, OrderMDY: {"mês/dia/ano", "month/day/year"}, OrderYMD: {"ano-mês-dia", "year-month-day"}}[order]
}
