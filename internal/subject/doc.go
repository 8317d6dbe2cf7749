// Package subject answers a guardian's data-subject requests (LGPD arts. 18–19: access within
// 15 days, erasure) and applies a church's retention period (arts. 15–16), written by hand.
// cmd/neemias-mcp's `subject export|erase|retention` commands are thin wrappers over it.
//
// Every operation runs in the maintenance context (store.InSystemTx, the schema owner), names
// the church in every statement, and is audited as an operator action (audit.InsertOperator:
// church, no user, client "neemias-mcp-cli") in the same transaction as what it records. A
// guardian is named by id, never by name or phone, and no error or result quotes a name, a
// phone, a birth date or an alert.
//
// # Export ([Export])
//
// Everything held about the guardian and the children linked to them: the guardian's record
// (name, phone, the linked account's email, role and dates), each child's record (name, birth
// date, class, handle, allergies and medical notes, archived or not, enrollment date), the
// children's guardian links with their relationships (another guardian of the child appears
// by id and relationship only: their name and phone are their own data, not the requester's),
// the consent records of the guardian and of the children (version, legal basis, granted and
// revoked, by which account), the children's pick-up lists, their check-ins (day, class, in and
// out, who checked in, who released, who took the child), and the audit log's entries naming
// the guardian, their account or a child, read with audit.List (the same reading code and the
// same audit.export trace as `neemias-mcp audit export`). Accounts that acted are named with
// their role; a staff member's display name is given (they acted for the church, and art. 18
// VII gives the right to know who processed the data), another guardian's is not.
//
// A restriction (an adult who must not take the child, with a note for the volunteer) is
// listed as existing, with its dates, but without the restricted person's name, phone,
// relationship or note: they are a third person's data and a safeguarding measure, often a
// custody order whose disclosure can put the child at risk (ECA art. 18, the child's best
// interest; LGPD art. 18 does not reach third persons' data), and the spec already hides
// restrictions from guardians (row filter guardian_sees_no_restrictions). The coordinator
// answers questions about them in person. Trusted adults are listed in full: the guardian
// names them and sees them through pickups:read already.
//
// The export states what cannot be erased and why ([Retained]).
//
// # Erase ([Erase]) and retention ([Retention])
//
// Erasure anonymizes in place rather than deleting, so that ids in the audit log, consent
// evidence and check-in counts keep pointing at a row:
//
//   - the guardian: name → [Marker], phone → [PlaceholderPhone] (the schema requires one);
//     their account: display name → [Marker], email → removido-<account id>@removido.invalid,
//     password removed, disabled, OAuth grants revoked, login sessions, upstream identities,
//     set-password codes, pending authorization requests and codes deleted, API keys revoked;
//     their active consents are revoked (the record stays as evidence);
//   - each child whose guardians are all being erased: name → [Marker], birth date → 1 January
//     of the birth year (the schema requires a date; the year keeps past age-group counts
//     right to the year, and alone, with no name or family, identifies no one), allergies and
//     medical notes removed, archived; its pick-up list entries: names → "Removido N",
//     relationship → [Marker], phone and notes removed (a restriction's note, required by the
//     schema, → [Marker]); its check-ins stay as rows of the anonymized child (attendance
//     counts), with the name of who took the child → [Marker];
//   - a child who keeps another, non-erased guardian is not anonymized: only its link to the
//     erased guardian goes. A check-in of any child where the erased guardian took the child
//     home keeps the guardian's id and loses the name. A restriction against the erased
//     guardian on such a child is kept as it is: it protects a child who stays (ECA), and is
//     the church's safeguarding record, not the guardian's (counted in [Plan.RestrictionsKept]).
//
// The audit log holds ids only (TestErase searches every text, array, JSON and date column of every
// table), is append-only and is kept whole: it is the legal record of who accessed what
// (arts. 37 and 16 I), and a child's safeguarding facts may be needed long after, because
// limitation periods do not run against minors under 16 (Código Civil arts. 3 and 198 I).
//
// One transaction per request: the plan, the changes and the audit entry commit together.
// A dry run computes the same plan and writes nothing, not even an audit entry.
//
// Retention erases, as above, every guardian of the church whose record and linked children
// all predate the cutoff and none of whose children has checked in since; the period is the
// church's, at least one month; the answer counts, never names.
package subject
