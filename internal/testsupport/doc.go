// Package testsupport holds hand-written helpers shared by the tests of several packages: a
// goroutine-safe buffer for captured logs and command output, and the pinned Node/npm harness
// that the TypeScript-client and conformance tests run. It is for tests only: production code
// must not import it.
package testsupport
