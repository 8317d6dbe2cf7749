// Package testsupport holds hand-written helpers shared by the tests of several packages: a
// goroutine-safe buffer for captured logs and command output. It is for tests only:
// production code must not import it.
package testsupport
