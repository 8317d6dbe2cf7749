package rosterimport

import (
	"regexp"
	"strings"
)

// record is one row of the file as a spreadsheet shows it.
type record struct {
	// Row is the spreadsheet's row number (1 is the first row; a "sep=" line, which Excel
	// hides, is not counted); a quoted cell with a line break stays in one row.
	Row int
	// Line and EndLine are the physical lines of the text it spans.
	Line, EndLine int
	Fields        []string
	// Unclosed is the 0-based index of a field whose opening quote is never closed (-1: none).
	// The record then ends at the end of the line the quote opened on, and reading resumes on
	// the next line, so the rows after it are not swallowed into the cell.
	Unclosed int
}

var sepLineRE = regexp.MustCompile(`^(?i:sep)=([;,\t|])[ \t]*\r?\n`)

// sepLine reads Excel's optional first line "sep=;": the separator it names and the text
// after it (0 and the text itself when there is none).
func sepLine(text string) (byte, string) {
	if m := sepLineRE.FindStringSubmatch(text); m != nil {
		return m[1][0], text[len(m[0]):]
	}
	return 0, text
}

// readRecords splits text into records separated by sep, RFC 4180 quoting ("" is a quote
// inside a quoted field; text after a closing quote is kept). width is the header's number
// of fields (0 while looking for the header): a quoted cell whose next line holds width-1
// separators is taken for an unclosed quote, since a cell does not hold a whole row.
func readRecords(text string, sep byte, width, limit int) []record {
	var out []record
	pos, line, row := 0, 1, 0
	n := len(text)
	for pos < n && (limit <= 0 || len(out) < limit) {
		row++
		rec := record{Row: row, Line: line, Unclosed: -1}
		for {
			var b strings.Builder
			if text[pos] == '"' {
				start, startLine := pos, line
				pos++
				closed := false
				for pos < n {
					c := text[pos]
					if c == '"' {
						if pos+1 < n && text[pos+1] == '"' {
							b.WriteByte('"')
							pos += 2
							continue
						}
						pos++
						closed = true
						break
					}
					if c == '\n' {
						line++
						if width >= 3 && strings.Count(lineAt(text, pos+1), string(sep)) >= width-1 {
							break // the next line is a row of its own: the quote was never closed
						}
					}
					b.WriteByte(c)
					pos++
				}
				if !closed {
					// End the record at the end of the quote's line; resume on the next one.
					rec.Unclosed = len(rec.Fields)
					rec.Fields = append(rec.Fields, "")
					end := strings.IndexByte(text[start:], '\n')
					if end < 0 {
						pos = n
					} else {
						pos = start + end + 1
					}
					line = startLine + 1
					rec.EndLine = startLine
					break
				}
				for pos < n && text[pos] != sep && text[pos] != '\n' && text[pos] != '\r' {
					b.WriteByte(text[pos])
					pos++
				}
			} else {
				for pos < n && text[pos] != sep && text[pos] != '\n' {
					b.WriteByte(text[pos])
					pos++
				}
			}
			rec.Fields = append(rec.Fields, strings.TrimSuffix(b.String(), "\r"))
			if pos < n && text[pos] == sep {
				pos++
				if pos == n {
					rec.Fields = append(rec.Fields, "")
					rec.EndLine = line
					break
				}
				continue
			}
			if pos < n && text[pos] == '\r' {
				pos++
			}
			if pos < n && text[pos] == '\n' {
				pos++
				rec.EndLine = line
				line++
			} else {
				rec.EndLine = line
			}
			break
		}
		out = append(out, rec)
	}
	return out
}

// lineAt is the text from i to the end of its line.
func lineAt(text string, i int) string {
	if i >= len(text) {
		return ""
	}
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return text[i : i+j]
	}
	return text[i:]
}
