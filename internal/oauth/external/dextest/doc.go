// Package dextest runs Dex (github.com/dexidp/dex), the OpenID Connect provider many churches
// put in front of LDAP, GitHub or a password file, as a real provider in tests: built from the
// Go module proxy at a pinned release (Binary), started on loopback plain http with an
// in-memory store and static clients and users (Start), tokens fetched with the password grant
// (PasswordToken). Dex is the provider shape that mints none of our scopes: its access tokens
// are JWTs with aud the client id (or, through cross-client "audience:server:client_id:X"
// scopes, X), groups in "groups", no scope claim, no client registration.
package dextest
