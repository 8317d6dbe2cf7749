package main

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/oauth"
)

func TestLoginSessionFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		idle, max time.Duration
	}{
		{nil, oauth.DefaultLoginSessionIdle, oauth.DefaultLoginSessionMax},
		{[]string{"--login-session-idle", "5m", "--login-session-max", "1h"}, 5 * time.Minute, time.Hour},
		{[]string{"--login-session-idle", "0"}, -1, oauth.DefaultLoginSessionMax},
	} {
		var f authServerFlags
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		f.add(c)
		c.SetArgs(tc.args)
		if err := c.Execute(); err != nil {
			t.Fatal(err)
		}
		if o := f.options(); o.LoginSessionIdle != tc.idle || o.LoginSessionMax != tc.max {
			t.Errorf("%v: idle %v max %v, want %v %v", tc.args, o.LoginSessionIdle, o.LoginSessionMax, tc.idle, tc.max)
		}
	}
}
