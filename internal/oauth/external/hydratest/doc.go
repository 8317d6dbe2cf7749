// Package hydratest runs ORY Hydra (github.com/ory/hydra/v2, Version) as a real third-party
// OpenID Connect provider for tests: Binary builds it from the Go module proxy into the user
// cache directory (outside the repository; once per machine, under a file lock), Start
// migrates a fresh PostgreSQL database of its own and serves it on free loopback ports, its
// public port behind an https front (the issuer) whose discovery documents a test may
// rewrite, its login and consent steps answered through the admin API for the User the test
// sets. Test-only; no Hydra code or binary is ever part of the repository.
package hydratest
