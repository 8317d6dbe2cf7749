package incident

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/neemias/neemias-mcp/internal/csvsafe"
)

// kindText says each kind of data in the words of a notification (pt-BR as the ANPD's form is
// written, English for the operator), and whether it is sensitive (art. 5 II, art. 11).
var kindText = map[string]struct {
	pt, en    string
	sensitive bool
}{
	"child_name":       {"nome de crianças", "children's names", false},
	KindChildShortName: {"prenome e inicial de crianças", "children's first names and initials", false},
	"birth_date":       {"data de nascimento de crianças", "children's birth dates", false},
	"guardian_name":    {"nome de responsáveis e de adultos autorizados", "names of guardians and authorized adults", false},
	"guardian_phone":   {"telefone de responsáveis e de adultos autorizados", "phones of guardians and authorized adults", false},
	"health":           {"dados de saúde de crianças (alergias, observações médicas)", "children's health data (allergies, medical notes)", true},
	"private_note":     {"observações sobre restrições de retirada (podem revelar decisão judicial de guarda)", "notes on pick-up restrictions (may reveal custody orders)", false},
	"secret":           {"códigos de retirada (válidos só no dia)", "pick-up codes (valid on their day only)", false},
	KindReligious:      {"convicção religiosa (vínculo com a igreja)", "religious affiliation (membership of the church)", true},
}

// KindText is the Portuguese and English description of a kind; an unknown kind is itself.
func KindText(kind string) (pt, en string, sensitive bool) {
	if t, ok := kindText[kind]; ok {
		return t.pt, t.en, t.sensitive
	}
	return kind, kind, false
}

// WriteReport writes an entry as the facts the notification of Res. CD/ANPD nº 15/2024 art. 6
// asks for, in its order, each with what the register knows or what the operator must add.
func WriteReport(w io.Writer, in Incident, now time.Time) error {
	b := &strings.Builder{}
	day := func(t time.Time) string { return t.In(brasilia).Format("2006-01-02 15:04 MST") }
	opt := func(t *time.Time) string {
		if t == nil {
			return "unknown"
		}
		return day(*t)
	}
	fmt.Fprintf(b, "Incident %s (register of security incidents, LGPD art. 48, Res. CD/ANPD 15/2024)\n", in.ID)
	fmt.Fprintf(b, "Recorded %s by %s; reach established from %s\n\n", day(in.RecordedAt), in.RecordedBy, basisText(in))
	fmt.Fprintf(b, "Notification deadline (3 business days from knowledge): %s\n", day(in.Deadline))
	switch {
	case in.ANPDNotifiedAt != nil:
		fmt.Fprintf(b, "  ANPD notified %s", day(*in.ANPDNotifiedAt))
		if in.ANPDNotifiedAt.After(in.Deadline) {
			fmt.Fprintf(b, " (after the deadline: the notification must give the reasons for the delay)")
		}
		b.WriteString("\n")
	case in.NotNotifiedReason != "":
		fmt.Fprintf(b, "  Not notified: %s\n", in.NotNotifiedReason)
	case now.After(in.Deadline):
		fmt.Fprintf(b, "  OVERDUE: the ANPD has not been notified; give the reasons for the delay (item V)\n")
	default:
		fmt.Fprintf(b, "  %s left\n", in.Deadline.Sub(now).Round(time.Hour))
	}
	if in.SubjectsNotifiedAt != nil {
		fmt.Fprintf(b, "  Data subjects notified %s\n", day(*in.SubjectsNotifiedAt))
	} else {
		fmt.Fprintf(b, "  Data subjects not yet notified: neemias-mcp incident subjects %s --output FILE lists them\n", in.ID)
	}
	risk := "no"
	if in.RelevantRisk {
		risk = "yes: children's or sensitive data (art. 5 §1): the ANPD and the data subjects must be notified"
	}
	fmt.Fprintf(b, "Relevant risk or damage: %s\n\n", risk)

	fmt.Fprintf(b, "I. Nature and categories of the data (natureza e categoria dos dados):\n")
	for _, k := range in.Kinds {
		pt, en, sensitive := KindText(k)
		mark := ""
		if sensitive {
			mark = " [sensitive / sensível]"
		}
		fmt.Fprintf(b, "   - %s (%s)%s\n", en, pt, mark)
	}
	fmt.Fprintf(b, "II. Data subjects reached (titulares afetados): %d children (crianças, art. 14), %d guardians (responsáveis)\n", in.Children(), in.Guardians())
	for _, c := range in.Churches {
		fmt.Fprintf(b, "   - %s (%s): %d children, %d guardians", c.Name, c.Slug, c.Children, c.Guardians)
		if c.AuditEntries > 0 {
			fmt.Fprintf(b, ", from %d audit entries", c.AuditEntries)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "III. Technical and security measures in place (medidas de segurança): row-level security in PostgreSQL\n"+
		"    per church and role; personal data fields released by OAuth scope; TLS; pick-up codes stored under\n"+
		"    a keyed hash; an append-only audit log of every access; no personal data in logs or to upstreams\n")
	fmt.Fprintf(b, "IV. Risks and possible impacts (riscos e impactos): %s\n", risksText(in))
	fmt.Fprintf(b, "V. Reasons for any delay (motivos da demora): %s\n", orAdd(delayText(in, now)))
	fmt.Fprintf(b, "VI. Measures taken or to be taken (medidas adotadas): %s\n", orAdd(in.Measures))
	fmt.Fprintf(b, "VII. When it happened and became known: from %s until %s; known %s\n", opt(in.From), opt(in.Until), day(in.Detected))
	fmt.Fprintf(b, "VIII. Data protection officer (encarregado): %s\n", orAdd(in.DPO))
	fmt.Fprintf(b, "IX. Controller (controlador):")
	for i, c := range in.Churches {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(b, "%s %s", sep, c.Name)
	}
	fmt.Fprintf(b, "\nX. Processor (operador): the organization that hosts this Neemias server, if not the church\n")
	fmt.Fprintf(b, "XI. What happened and its cause (descrição e causa): %s\n", in.Summary)
	fmt.Fprintf(b, "XII. Everyone whose data the affected processing holds (total de titulares):")
	for _, c := range in.Churches {
		fmt.Fprintf(b, " %s: %d children, %d guardians;", c.Slug, c.ChildrenTotal, c.GuardiansTotal)
	}
	b.WriteString("\n\nKeep this entry at least five years (it cannot be deleted before). Complete it with\n")
	fmt.Fprintf(b, "neemias-mcp incident update %s --measures ... --anpd-notified ... --subjects-notified ...\n", in.ID)
	_, err := io.WriteString(w, b.String())
	return err
}

func orAdd(s string) string {
	if s == "" {
		return "(to add: neemias-mcp incident update)"
	}
	return s
}

func basisText(in Incident) string {
	switch in.Basis {
	case ByAudit:
		who := []string{}
		if in.ActorUser != nil {
			who = append(who, "account "+in.ActorUser.String())
		}
		if in.ActorClient != "" {
			who = append(who, "client "+in.ActorClient)
		}
		return "the audit log's allowed entries of " + strings.Join(who, " through ")
	case WholeChurch:
		return "every record of the churches named (whole church)"
	}
	return string(in.Basis)
}

func risksText(in Incident) string {
	var parts []string
	for _, k := range in.Kinds {
		switch k {
		case "guardian_phone":
			parts = append(parts, "contact of families by someone posing as the church")
		case "health":
			parts = append(parts, "discrimination from children's health data")
		case "private_note":
			parts = append(parts, "exposure of family court matters")
		case "secret":
			parts = append(parts, "a child released to the wrong adult on the day (codes expire at check-out)")
		case KindReligious:
			parts = append(parts, "discrimination for religious affiliation")
		case "child_name", "birth_date":
			if !slices.Contains(parts, "identification and location of children") {
				parts = append(parts, "identification and location of children")
			}
		}
	}
	if len(parts) == 0 {
		return "(to assess)"
	}
	return strings.Join(parts, "; ")
}

func delayText(in Incident, now time.Time) string {
	late := (in.ANPDNotifiedAt != nil && in.ANPDNotifiedAt.After(in.Deadline)) || (in.ANPDNotifiedAt == nil && now.After(in.Deadline))
	if !late {
		return "none: within the deadline"
	}
	return ""
}

// WriteSubjectsCSV writes the guardians to notify as CSV, formula cells neutralized.
func WriteSubjectsCSV(w io.Writer, subjects []Subject) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"church", "guardian", "phone", "children"}); err != nil {
		return err
	}
	for _, s := range subjects {
		if err := cw.Write(csvsafe.Row([]string{s.Church, s.Name, s.Phone, s.Children})); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
