// Package csvsafe is the one rule every CSV this server writes follows against CSV injection
// (OWASP "CSV Injection"): a cell that starts with "=", "+", "-", "@", a tab or a carriage
// return would be run as a formula by a spreadsheet, so it is written with a leading "'",
// which spreadsheets show as text. internal/rosterexport (roster, attendance) and
// internal/audit (the audit log export) both write their cells through [Cell]. Hand-written.
package csvsafe

import "strings"

// formulaLeads are the first characters that make a spreadsheet read a cell as a formula.
const formulaLeads = "=+-@\t\r"

// Cell neutralizes a cell a spreadsheet would run as a formula; any other cell is returned
// unchanged.
func Cell(cell string) string {
	if cell != "" && strings.IndexByte(formulaLeads, cell[0]) >= 0 {
		return "'" + cell
	}
	return cell
}

// Row neutralizes every cell of row, in place, and returns it.
func Row(row []string) []string {
	for i, c := range row {
		row[i] = Cell(c)
	}
	return row
}
