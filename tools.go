//go:build tools

// Package tools pins the code generators the Makefile runs with `go run`, so a fresh machine
// needs nothing but Go and the module proxy: their versions live in go.mod like any dependency.
package tools

import (
	_ "github.com/ogen-go/ogen/cmd/ogen"
	_ "github.com/sqlc-dev/sqlc/cmd/sqlc"
)
