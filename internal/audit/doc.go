// Package audit appends entries to the append-only audit log (table audit_log, migration
// 00003): who (user, OAuth client) used which capability on which records, when, and whether it
// was allowed. Entries hold ids only, never personal data: no names, birth dates, phones,
// pick-up codes or free text from requests. Hand-written; nothing in it is generated.
//
// The capability logic (internal/logic) writes its entries in the same transaction as the
// access it records; the protocol layer records refusals that happen before the logic runs
// (missing scope) through logic.Service.AuditDenied, which uses [Record].
package audit
