// Package attendanceimport brings a church's past attendance into Neemias from the
// spreadsheet it kept before (issue 22), so that "how many kids came in June?" has an answer
// from the first day: one check-in per row, written by hand (nothing here is generated).
// cmd/neemias-mcp's `import attendance` is a thin wrapper over [Run].
//
// Reading is internal/rosterimport's, shared: its decoder (UTF-8, UTF-16, Windows-1252,
// CP850), CSV reader (spreadsheet row numbers, broken quotes, title rows), header matching
// and header errors ([rosterimport.ReadTable] over this package's [Schema]), dates
// (--date-order or the values; Excel serials) and its report vocabulary. The columns are
// [Columns]: the child (name, or handle), optionally the child's birth date, the service day,
// the class, and optionally the check-in and check-out times (HH:MM in the church's time
// zone, churches.time_zone).
//
// Matching, nothing guessed:
//   - a child is named by handle (a handle column, or a child cell that is exactly one of the
//     church's handles) or by full name: the name normalized as the roster stores it
//     (rosterimport.NormalizeName) and compared folded (NFC, case, accents and punctuation
//     ignored: rosterimport.Fold) with every child of the church, archived ones included (a
//     child who has left has a history too). Two children of that name make the row
//     ambiguous, refused, unless the birth-date column tells them apart; a birth date that
//     fits none of them refuses it too. A handle and a name on one row must be one child's.
//   - a class is one of the church's, by exact name or else folded, an archived class
//     included (it may have closed since); an unknown class refuses the row: an import never
//     creates a class.
//
// What a row may not do: be dated today or later (only the past is imported: today's check-in
// is made at the door and hands the guardian a pick-up code), be dated before the child's
// birth, check out before it checked in, or contradict another row or the database. A
// check-in is unique per child and day (checkins_child_date_key): a row whose child already has
// that day's check-in in the same class is "already present" and changes nothing (so
// importing a file again changes nothing), in another class it is refused and the check-in
// stays as it is; a row repeating an earlier row's child and day is refused.
//
// Writing ([Run]): one transaction in the maintenance context (store.InSystemTx, as the
// schema owner, like internal/rosterimport: the tables' forced row-level security admits the
// owner's policy), serialized with the church's other imports (rosterimport.LockChurch), set
// based (INSERT ... SELECT FROM unnest, never a round trip per row), with one audit entry
// (operator action import.attendance). A refused row does not stop the others unless
// Options.Strict; a dry run does everything and rolls back.
//
// Imported history is told apart by who checked the children in: checked_in_by (NOT NULL,
// a user of the church) is the church's import account, [ImportAccountEmail], created
// disabled, without a password and with the least staff role on first use, so it can never
// sign in, and app_user_name shows it as "Histórico importado". The pick-up code columns are
// NOT NULL too: no code was ever issued for a past Sunday, so an imported check-in gets a
// random salt and 32 random bytes for its hash, with no key (pickup_key_id NULL). Those bytes
// are the hash of no code that anyone holds, so neemias_checkout_register can never close an
// imported check-in; a row without a check-out time keeps checked_out_at NULL ("no
// check-out recorded"), one with a time is closed by the import account at that time.
//
// Personal data: the [Report] names refused rows by spreadsheet row number and reason, and
// columns by their header names; it never quotes a cell (name, handle, date, class, time).
package attendanceimport
