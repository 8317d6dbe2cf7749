package attendanceimport

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

// Report is what a run did (or, for a dry run, would do).
type Report struct {
	Church    string
	DryRun    bool
	Encoding  string
	Separator rune
	// HeaderRow is the spreadsheet row of the header; DateOrder the order its dates were read in.
	HeaderRow int
	DateOrder string
	Columns   map[Field]string
	Ignored   []string
	// Lines is the number of data rows read. Imported counts the check-ins added, Present the
	// rows whose check-in was there already (the same child, day and class); every other row
	// is in Refused.
	Lines, Imported, Present int
	// Children is the number of different children given a check-in; ServiceDays the service
	// days opened (service_days rows added).
	Children, ServiceDays int
	Refused               []rosterimport.Refusal
	// Warnings are rows imported with something to check (by row number, never a value).
	Warnings []rosterimport.Warning
	// Committed: the changes are in the database (false for a dry run and a refused file).
	Committed bool
	Elapsed   time.Duration
}

// Accepted is the number of rows not refused: imported, or present already. An import that
// accepts none (every row refused, or none at all) is a failure for the command line.
func (r *Report) Accepted() int { return r.Imported + r.Present }

// WriteText writes the report for the operator in lang: "pt", "en", or both (anything else,
// the default): the counts, then every refused row with its spreadsheet row number and
// reason. It names columns, row numbers and reasons only: never a cell's content (a name, a
// handle, a date, a class, a time).
func (r *Report) WriteText(w io.Writer, lang string) error {
	t := func(pt, en string) string { return rosterimport.Reason{PT: pt, EN: en}.In(lang) }
	var b strings.Builder
	mode := t("importação de presença", "attendance import")
	if r.DryRun {
		mode = t("simulação (--dry-run), nada foi gravado", "dry run (--dry-run), nothing was written")
	} else if !r.Committed {
		mode = t("recusada, nada foi gravado", "refused, nothing was written")
	}
	fmt.Fprintf(&b, "%s: %s — %s\n", t("Igreja", "church"), r.Church, mode)
	fmt.Fprintf(&b, "%s: %s, %s", t("Arquivo", "file"), r.Encoding, rosterimport.SeparatorName(r.Separator).In(lang))
	if order := rosterimport.DateOrderName(r.DateOrder); order.PT != "" {
		fmt.Fprintf(&b, ", %s %s", t("datas", "dates"), order.In(lang))
	}
	b.WriteString("\n")
	if r.HeaderRow > 1 {
		fmt.Fprintf(&b, "%s\n", t(fmt.Sprintf("Cabeçalho na linha %d; as linhas acima foram ignoradas", r.HeaderRow),
			fmt.Sprintf("header on row %d; the rows above it were skipped", r.HeaderRow)))
	}
	if len(r.Ignored) > 0 {
		q := make([]string, len(r.Ignored))
		for i, s := range r.Ignored {
			q[i] = strconv.Quote(s)
		}
		fmt.Fprintf(&b, "%s: %s\n", t("Colunas ignoradas", "ignored columns"), strings.Join(q, ", "))
	}
	fmt.Fprintf(&b, "%s: %d; %s: %d; %s: %d; %s: %d\n", t("Linhas lidas", "rows read"), r.Lines, t("importadas", "imported"), r.Imported,
		t("já presentes", "already present"), r.Present, t("recusadas", "refused"), len(r.Refused))
	fmt.Fprintf(&b, "  %s: %d; %s: %d\n", t("crianças com check-ins novos", "children with new check-ins"), r.Children,
		t("dias de culto abertos", "service days opened"), r.ServiceDays)
	if len(r.Refused) > 0 {
		fmt.Fprintf(&b, "%s:\n", t("Linhas recusadas", "refused rows"))
		for _, f := range r.Refused {
			fmt.Fprintf(&b, "  %s %d: %s\n", t("linha", "line"), f.Line, f.In(lang))
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "%s: %d\n", t("Avisos", "warnings"), len(r.Warnings))
		var order []string
		lines := map[string][]string{}
		text := map[string]rosterimport.Reason{}
		for _, w := range r.Warnings {
			if _, ok := text[w.EN]; !ok {
				order = append(order, w.EN)
				text[w.EN] = w.Reason
			}
			lines[w.EN] = append(lines[w.EN], strconv.Itoa(w.Line))
		}
		for _, k := range order {
			fmt.Fprintf(&b, "  %s %s: %s\n", t("linhas", "rows"), strings.Join(lines[k], ", "), text[k].In(lang))
		}
	}
	fmt.Fprintf(&b, "%s: %s\n", t("Tempo", "time"), r.Elapsed.Round(time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
}
