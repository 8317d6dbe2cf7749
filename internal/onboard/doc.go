// Package onboard is what an operator does to set a church up, written by hand: create the
// church, add, list and disable its staff accounts, give a local login a one-time
// set-password link (or set the password from the operator's terminal), add and list its
// classes, assign volunteers to classes, register the consent texts a roster's "Sim"/"Yes"
// consent cells refer to (consent_texts, migration 00100). It also owns the links' codes (passwordcode.go):
// issued here, redeemed by the authorization server's /set-password page (internal/oauth),
// which is the person's own action and is audited as theirs (audit.InsertUserAction).
// cmd/neemias-mcp's church, user, class, volunteer and consent-text commands are thin wrappers over it.
//
// Every operation runs in one transaction of the maintenance context (store.InSystemTx: the
// connecting role, the schema owner, under the *_owner policies of migration 00004) and
// appends an audit entry as an operator action (audit.InsertOperator: church, no user,
// client "neemias-mcp-cli") in that same transaction, so a change never commits without its
// trace and a refused one leaves nothing behind. Why the owner and not neemias_app with a
// caller: the operator is not a user of any church (the first ADMIN does not exist until
// `user add` creates it), the application role may not write users at all, and the audit
// policy of the application role requires an entry's user to be the caller's. The SQL
// therefore names the church explicitly in every statement; the tests check that an
// operation on one church leaves every other untouched.
//
// Roles are the spec's (gen/scopes.Roles); the schema's checks stay the last word, and their
// refusals arrive through store.MapError without row values.
package onboard
