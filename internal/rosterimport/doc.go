// Package rosterimport brings a church's existing roster into Neemias from the spreadsheet it
// already keeps, exported as CSV: children, their guardians, the links between them and the
// guardians' consent, written by hand (nothing here is generated). cmd/neemias-mcp's
// `import roster` is a thin wrapper over [Run]. Its rule: every cell is stored as meant or its
// row is refused with a reason (Portuguese and English) that names the column and the kind of
// problem and says what to do; nothing is guessed.
//
// Reading ([Parse]; docs/onboarding.md has the whole list):
//   - encoding (decode.go), decided per file and checked over the whole file: UTF-8 with or
//     without BOM, UTF-16 with BOM, Windows-1252 or CP850 (whichever reads the accented bytes as
//     Portuguese letters; neither clearly: refused); a UTF-8 file with rows pasted from a
//     Windows-1252 sheet is read row by row, those rows listed as warnings. Text is NFC.
//   - structure (csvread.go): our own RFC 4180 reader, so rows keep the spreadsheet's numbers
//     (a quoted line break stays in its row; a "sep=;" line is not a row), an unclosed quote
//     refuses its row without swallowing the next ones, and a row with the wrong number of
//     fields is refused; separator and header row (title rows above it are skipped) are found
//     by matching the header names against the aliases of [Columns], case, accents and
//     punctuation ignored; first and last name columns are joined.
//   - values (values.go): dates in the file's day/month order, read from its values or given
//     ([ParseOptions].DateOrder; an ambiguous or self-contradicting file is a [FileError]),
//     ISO dates, Excel serial dates; phones by github.com/nyaruka/phonenumbers, a number without
//     a plus sign belonging to the default country and valid there, its first digit group the area
//     code (never re-homed), Brazilian 8-digit mobiles given their 9; names squeezed,
//     title-cased when in capitals only, "Souza, Ana" reordered; consent cells meaning no or
//     pending refuse the row, yes counts only with a registered --consent-version, a version is
//     one word with a digit; relationships from a pt-BR and English vocabulary, an unknown word
//     "other" with a warning.
//
// The reader is shared with the church's other spreadsheets (internal/attendanceimport):
// [ReadTable] reads any file for a [Schema] (columns, aliases, which column needs or stands in
// for which; [RosterSchema] is the roster's) with everything above but the values, and
// [DetectDateOrder], [ParseDate], [NormalizeName], [Fold], [LockChurch] and the report's
// [Reason], [SeparatorName] and [DateOrderName] are exported for it, so that both imports read,
// compare and report alike.
//
// Matching (plan, in import.go), which makes an import idempotent: a guardian is a person, the same
// guardian when the phone agrees and the names are one person's (samePerson: folded alike,
// or the same first and last name); two names on one phone are two guardians, and a row never
// renames another family's guardian; a spelling changes only toward the fuller form
// (betterName), so two sheets do not flip a record. A child is the same child when the
// folded name and the birth date agree and it has a guardian in common with the file's rows
// for it; otherwise it is another family's child and a new one is created (with a warning).
// A file without a relationship column never changes a link's relationship.
//
// Consent (LGPD art. 14): a row is imported only when it carries a legal basis: the version
// of the consent text the guardian agreed to (legal basis consent), a yes naming a registered
// consent text (consent_texts, migration 00100), or another legal basis named explicitly in
// the legal-basis column. Rows without one are refused and reported. Consent records are
// evidence: an import adds records, never changes or deletes one.
//
// Writing ([Run]): one transaction per run in the maintenance context (store.InSystemTx, as
// the schema owner, like internal/onboard, whose doc says why), all or nothing, with one
// audit entry as an operator action. The rows go in as a handful of set-based statements
// (INSERT ... SELECT FROM unnest of arrays), not a round trip per row: COPY is not available
// under the tables' forced row-level security unless the role bypasses it. A dry run does all
// of it and rolls back.
//
// Personal data: the [Report] names refused rows and warnings by spreadsheet row number and
// reason, and columns by their header names; it never quotes a cell (name, date, phone, free
// text, class); nothing is logged.
package rosterimport
