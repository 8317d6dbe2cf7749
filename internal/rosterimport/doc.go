// Package rosterimport brings a church's existing roster into Neemias from the spreadsheet it
// already keeps, exported as CSV: children, their guardians, the links between them and the
// guardians' consent, written by hand (nothing here is generated). cmd/neemias-mcp's
// `import roster` is a thin wrapper over [Run].
//
// Reading ([Parse]): UTF-8 (with or without BOM) or Windows-1252 (the encoding of Excel's
// "CSV" export in Portuguese), comma, semicolon or tab separated, header names in Portuguese
// or English matched case- and accent-insensitively against the aliases of [Columns]; dates
// as DD/MM/AAAA or AAAA-MM-DD; Brazilian phone numbers in any common format, normalized to
// E.164 by github.com/nyaruka/phonenumbers.
//
// Matching, which makes an import idempotent: a child is the same child when the folded name
// (case, accents and spacing ignored) and the birth date agree; a guardian is the same
// guardian when the phone number (E.164) agrees. Importing the same file twice changes
// nothing; a corrected file updates what changed (the spelling of a name, a guardian's name,
// a relationship, an explicit class, a new consent version) and adds what is new.
//
// Consent (LGPD art. 14): a row is imported only when it carries a legal basis: the version
// of the consent text the guardian agreed to (legal basis consent), or another legal basis
// named explicitly in the legal-basis column. Rows without one are refused and reported.
// Consent records are evidence: an import adds records, never changes or deletes one.
//
// Writing ([Run]): one transaction per run in the maintenance context (store.InSystemTx, as
// the schema owner, like internal/onboard, whose doc says why), all or nothing, with one
// audit entry as an operator action. The rows go in as a handful of set-based statements
// (INSERT ... SELECT FROM unnest of arrays), not a round trip per row: COPY is not available
// under the tables' forced row-level security unless the role bypasses it. A dry run does all
// of it and rolls back.
//
// Personal data: the [Report] names refused rows by line number and reason (in Portuguese
// and English) and never quotes a name, date or phone; nothing is logged.
package rosterimport
