// Package seed generates the synthetic demo data of Neemias MCP: churches with their classes,
// staff, volunteers, children, guardians, consent records, pick-up lists and months of weekly
// Sunday services with check-ins and pick-ups. Nobody in it is real: names are drawn from small
// invented word lists, phone numbers use the non-existent area code 00.
//
// Pick-up lists make a Sunday demonstrable: the demo guardian's mother is a trusted adult of
// both her children (added by the guardian), the desk added a trusted adult for some children
// of Jardim and Primários, and one child of Jardim has a restriction (an adult who must not
// take them home, with the note the volunteer reads). Every historic check-out names who took
// the child home (a guardian, now and then the trusted adult), so "who picked up X?" answers.
// Children's handles are fixed per church and index (see handleTop), not drawn from the
// database's sequence, so they too are the same on every run.
//
// The output is deterministic: a fixed PRNG seed per church and ids derived from it (UUIDv5)
// give the same rows, ids included, on every run with the same [Options]. Seeding is
// idempotent per church: a church that exists already is skipped, so seeding the demo church
// twice is a no-op and raising Churches adds only the missing ones. Rows are written with COPY.
//
// The first church is the demo church, with well-known ids and one account per role:
// admin@demo.neemias.test (ADMIN), cadastro@… (CADASTRO), voluntario@… (VOLUNTARIO, assigned to
// Jardim and Primários) and responsavel@… (RESPONSAVEL, mother of two enrolled children), all
// with the password "demo". Hand-written; nothing in it is generated.
package seed
