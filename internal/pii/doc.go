// Package pii is the personal-data scanner of the governed upstream client (issue 11), written
// by hand: it walks a JSON value (a request to, or a response from, an upstream MCP server) and
// reports where personal data sits, as a detector name plus a JSON path, never the value.
//
// It owns:
//   - the pattern detectors, on normalized text, each confirmed by a checksum or a parser,
//     never by a pattern alone: CPF and CNPJ (numeric and the alphanumeric CNPJ in force since July 2026,
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
// # Normalization
//
// Every string is normalized before any detector runs (normalize.go), so that data typed
// differently is the same data: invisible characters are removed (format characters, Cf:
// zero-width space and joiners, soft hyphen, byte-order mark, bidi controls; variation
// selectors; other default-ignorable code points), then Unicode NFKC (full-width digits and
// letters, superscripts, ligatures; decomposed accents composed), then what NFKC leaves is
// folded: decimal digits of every script to ASCII, dashes (Pd) and the minus sign to '-',
// middle dots to '.', fraction and division slashes to '/', space separators to ' ', and
// combining marks on anything but a letter dropped. Findings are mapped back to the original
// text, so redaction replaces the invisible characters inside a value with it. ASCII text, and
// text in NFKC whose non-ASCII runes are letters, skips the work.
//
// # False-positive rules
//
// CPF, CNPJ and phones are found by their digits and their grouping, not their punctuation
// (digits.go): a run is words of ASCII digits and upper-case letters separated by up to four
// spaces, dots, hyphens, slashes or parentheses (at most one dot, hyphen or slash); a
// candidate is whole words of a run whose boundaries fall where the number's groups do, and a
// candidate ends inside a run only at a wide separator (" - ", " / ", a parenthesis) or next
// to a word of letters ("CPF 529 982 247 25"), never at a lone separator between two groups of
// digits ("1.529.982.247-25", a card number and an NF-e key are one number each).
//
//   - CPF: 11 digits grouped as 3-3-3-2 or coarser (529.982.247-25, 529 982 247 25,
//     529982247-25, 52998224725, any separators), both check digits right, not all the same
//     digit, not after a '+'.
//   - CNPJ: 14 characters grouped as 2-3-3-4-2 or coarser; the first 12 are digits or
//     upper-case letters (the alphanumeric CNPJ), the last two are digits and both check
//     digits are right (character value = ASCII code − 48, weights 2..9 cycling from the right,
//     mod 11); all-same-character values are rejected. A lower-case token is never a CNPJ.
//   - Phone: a national number (area code and 8 digits starting 2-5, or 9 digits starting 9)
//     grouped at the area code, the mobile's leading 9 and the 4-digit halves, alone, after the
//     country code 55 (required after a '+') or after the trunk prefix 0 (011 98765-4321, set
//     off by a space or a parenthesis, never by a lone dot), that libphonenumber accepts as a
//     valid BR fixed-line or mobile number. 8- and 9-digit numbers without an area code never
//     match.
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
// misspelled, a one-word name, numbers split across JSON values, a phone glued to another
// number by a single space or separator ("sala 3 11 98765 4321" is one number), digits spelt
// out in words.
package pii
