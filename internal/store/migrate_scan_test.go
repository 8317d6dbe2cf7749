package store

import (
	"regexp"
	"testing"
)

// noTransactionWhole is the check optsOutOfTransactions replaced: one regexp over the text.
var noTransactionWhole = regexp.MustCompile(`(?mi)^--\s*\+goose\s+NO\s+TRANSACTION\b`)

var noTransactionCases = []string{
	"", "--", "-- +goose NO TRANSACTION", "-- +goose NO TRANSACTION\n", "-- +goose no transaction",
	"--+goose\tNO\n\nTRANSACTION", "--\n+goose NO TRANSACTION", "x\n-- +goose NO TRANSACTION",
	"x-- +goose NO TRANSACTION", " -- +goose NO TRANSACTION", "--- +goose NO TRANSACTION",
	"-- +goose NO TRANSACTIONS", "-- +goose NO TRANSACTION_x", "-- +goose NO TRANSACTION;",
	"\r\n-- +goose NO TRANSACTION", "-- x\n-- +goose Up\n-- +goose NO  TRANSACTION\r\n",
	"-- +goose NO TRANſACTION", "-- +GOOSE No Transaction", "----\n--\n-- +goose NO",
	"-- +goose Up\nSELECT 1; -- +goose NO TRANSACTION\n",
}

func TestOptsOutOfTransactionsIsTheRegexp(t *testing.T) {
	for _, s := range noTransactionCases {
		if got, want := optsOutOfTransactions([]byte(s)), noTransactionWhole.MatchString(s); got != want {
			t.Errorf("optsOutOfTransactions(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzOptsOutOfTransactions(f *testing.F) {
	for _, s := range noTransactionCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := optsOutOfTransactions([]byte(s)), noTransactionWhole.MatchString(s); got != want {
			t.Errorf("optsOutOfTransactions(%q) = %v, want %v", s, got, want)
		}
	})
}
