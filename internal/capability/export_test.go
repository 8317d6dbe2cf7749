package capability

import "text/template"

// AppendTypedText is AppendTextOf's typed path alone, for the external tests that hold it to
// the JSON path over the spec's output types.
var AppendTypedText = appendTypedText

// RunSummaryProgram runs t's compiled program alone over the typed output v: false when t
// has none, or v holds a value the program leaves to text/template.
func RunSummaryProgram(t *template.Template, v any) (string, bool) {
	b, _, ok := runCompiled(nil, summaryPlanOf(t), v)
	return string(b), ok
}
