// Package pii is the personal-data scanner of the governed upstream client (issue 11), written
// by hand: it walks a JSON value (a request to, or a response from, an upstream MCP server) and
// reports where personal data sits, as a detector name plus a JSON path, never the value.
//
// It owns:
//   - the pattern detectors, each confirmed by a checksum or a parser, never by a bare regular
//     expression: CPF and CNPJ (numeric and the alphanumeric CNPJ in force since July 2026,
//     mod 11), Brazilian phone numbers (github.com/nyaruka/phonenumbers) and e-mail addresses
//     (net/mail after a strict candidate pattern with a TLD);
//   - known-value detection ([KnownValues]): the caller's church's own children's and
//     guardians' names, guardians' phones and children's birth dates, matched by one
//     Aho-Corasick automaton (github.com/coregx/ahocorasick) over case- and accent-folded text
//     with word boundaries;
//   - [Loader], which reads one church's known values from the database and caches them per
//     church with a TTL and a bounded size;
//   - [Scanner.Redact], the `redact` policy: a copy of the document with every finding's value
//     replaced by "[redacted <detector>]", proven by tests to leave nothing a new scan finds.
//
// # What a finding carries
//
// A [Finding] has a detector and a path and no field that could hold the matched text, so no
// caller can log a value by accident. A path never quotes an object key in which personal data
// was found: such a key is reported on its object's path (Finding.InKey), and findings inside
// its value are reported on that object's path too.
//
// # False-positive rules
//
//   - CPF: 11 digits, bare or formatted exactly as 000.000.000-00, both check digits right,
//     not all the same digit, and not part of a longer run of digits or letters.
//   - CNPJ: 14 characters, bare or formatted as 00.000.000/0000-00; the first 12 are digits or
//     upper-case letters (the alphanumeric CNPJ), the last two are digits and both check
//     digits are right (character value = ASCII code − 48, weights 2..9 cycling from the right,
//     mod 11); all-same-character values are rejected. A lower-case token is never a CNPJ.
//   - Phone: only text shaped like a phone (with +55, with the area code in parentheses, or 10
//     or 11 digits whose first two are a valid DDD) that phonenumbers parses as a valid BR
//     fixed-line or mobile number. 8- and 9-digit numbers without an area code never match.
//   - E-mail: local@domain with a dotted domain ending in a 2+ letter TLD, accepted by
//     net/mail.ParseAddress.
//   - Known names: a name is used only when, folded, it has at least two words and at least
//     [MinNameLetters] letters; a one-word name ("Ana") is never matched alone, to avoid false
//     positives, and so is not protected by this detector. For names of three or more words
//     the first and last words are matched too ("Maria Eduarda Silva" also as "Maria Silva").
//     Matches need word boundaries: "Ana Lima" does not match inside "Banana Limada".
//   - Known phones: the national number (area code + subscriber) and the subscriber number,
//     as digits, matched on the digits of phone-shaped text, with digit boundaries.
//   - Known birth dates: AAAA-MM-DD, DD/MM/AAAA, DD-MM-AAAA and DD.MM.AAAA, with digit
//     boundaries (so the date part of an ISO timestamp counts). Other dates never match.
//
// What it does not catch: free text that paraphrases a child's name or a birth date, a name
// misspelled, a one-word name, numbers split across JSON values.
package pii
