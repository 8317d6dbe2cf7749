package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStateSealer(t *testing.T) {
	key1, key2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	s, err := NewStateSealer(key1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }
	b := StateBinding{Caller: "u|c|client", Method: "tools/call", Target: "neemias_child_enroll", ArgsDigest: DigestArgs(json.RawMessage(`{"a":1,"b":2}`))}
	state, err := s.Seal(b, []byte("payload"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(state, "payload") {
		t.Errorf("payload visible in state %q", state)
	}
	rotated, _ := NewStateSealer(key2, key1)
	rotated.now = s.now
	other, _ := NewStateSealer(key2)
	other.now = s.now
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	tests := []struct {
		name    string
		sealer  *StateSealer
		binding StateBinding
		state   string
		advance time.Duration
		ok      bool
	}{
		{"round trip", s, b, state, 0, true},
		{"args re-serialized in another key order", s, StateBinding{b.Caller, b.Method, b.Target, DigestArgs(json.RawMessage(`{ "b":2, "a":1 }`))}, state, 0, true},
		{"opened after key rotation", rotated, b, state, 0, true},
		{"tampered byte", s, b, string(tampered), 0, false},
		{"suffix appended", s, b, state + "-TAMPERED", 0, false},
		{"another caller", s, StateBinding{"someone|else|x", b.Method, b.Target, b.ArgsDigest}, state, 0, false},
		{"another tool", s, StateBinding{b.Caller, b.Method, "neemias_checkin_register", b.ArgsDigest}, state, 0, false},
		{"other arguments", s, StateBinding{b.Caller, b.Method, b.Target, DigestArgs(json.RawMessage(`{"a":2}`))}, state, 0, false},
		{"expired", s, b, state, 2 * time.Minute, false},
		{"unknown key", other, b, state, 0, false},
		{"empty", s, b, "", 0, false},
		{"not base64", s, b, "!!!", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now = time.Unix(1_800_000_000, 0).Add(tc.advance)
			got, err := tc.sealer.Open(tc.binding, tc.state)
			if tc.ok {
				if err != nil || string(got) != "payload" {
					t.Fatalf("Open = %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, ErrBadRequestState) {
				t.Fatalf("Open error = %v, want ErrBadRequestState", err)
			}
		})
	}
	if _, err := NewStateSealer([]byte("short")); err == nil {
		t.Errorf("short key accepted")
	}
}
