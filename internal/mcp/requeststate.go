package mcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrBadRequestState is returned by StateSealer.Open for a requestState that was tampered
// with, expired, or minted for another caller or request. Handlers return it as is: the runtime
// answers JSON-RPC -32602.
var ErrBadRequestState = errors.New("requestState failed verification")

// StateBinding is what a requestState is bound to: who asked, and which request.
type StateBinding struct {
	// Caller identifies the authenticated caller (user, church, OAuth client).
	Caller string
	// Method is the JSON-RPC method (tools/call, resources/read, prompts/get).
	Method string
	// Target is the tool or prompt name, or the resource URI.
	Target string
	// ArgsDigest is a digest of the request arguments (see DigestArgs).
	ArgsDigest [32]byte
}

// StateSealer seals and opens the requestState of 2026-07-28 multi-round-trip
// (input_required) results with AES-256-GCM. The binding is the AEAD's additional data, so a
// state opened for another caller, method, target or argument set fails; the expiry is inside
// the ciphertext. The payload is confidential too, but keep it small: it travels twice per
// round.
//
// Replay within the expiry is possible by design (the spec leaves single-use to servers that
// keep state); bind anything that must not repeat to data the handler re-checks.
type StateSealer struct {
	aeads []cipher.AEAD
	now   func() time.Time
}

const stateVersion byte = 1

// NewStateSealer returns a sealer. keys[0] seals; every key opens (rotation). Each key must be
// 32 bytes.
func NewStateSealer(keys ...[]byte) (*StateSealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("state sealer: no key")
	}
	s := &StateSealer{now: time.Now}
	for i, k := range keys {
		if len(k) != 32 {
			return nil, fmt.Errorf("state sealer: key %d is %d bytes, want 32", i, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("state sealer: key %d: %w", i, err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("state sealer: key %d: %w", i, err)
		}
		s.aeads = append(s.aeads, gcm)
	}
	return s, nil
}

// Seal returns an opaque requestState carrying payload, valid for ttl.
func (s *StateSealer) Seal(b StateBinding, payload []byte, ttl time.Duration) (string, error) {
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("sealing requestState: %w", err)
	}
	plain := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint64(plain, uint64(s.now().Add(ttl).Unix()))
	plain = append(plain, payload...)
	out := append([]byte{stateVersion}, nonce...)
	out = aead.Seal(out, nonce, plain, b.additionalData())
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open verifies state against the binding and returns its payload. Any failure is
// ErrBadRequestState (wrapped with the reason, for server-side logs only).
func (s *StateSealer) Open(b StateBinding, state string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) < 1 || raw[0] != stateVersion {
		return nil, fmt.Errorf("%w: malformed", ErrBadRequestState)
	}
	ad := b.additionalData()
	for _, aead := range s.aeads {
		ns := aead.NonceSize()
		if len(raw) < 1+ns+aead.Overhead()+8 {
			return nil, fmt.Errorf("%w: too short", ErrBadRequestState)
		}
		plain, err := aead.Open(nil, raw[1:1+ns], raw[1+ns:], ad)
		if err != nil {
			continue
		}
		if exp := int64(binary.BigEndian.Uint64(plain[:8])); s.now().Unix() > exp {
			return nil, fmt.Errorf("%w: expired", ErrBadRequestState)
		}
		return plain[8:], nil
	}
	return nil, fmt.Errorf("%w: authentication failed", ErrBadRequestState)
}

func (b StateBinding) additionalData() []byte {
	var out []byte
	out = append(out, "neemias-mcp/requestState/v1"...)
	for _, f := range []string{b.Caller, b.Method, b.Target} {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return append(out, b.ArgsDigest[:]...)
}

// DigestArgs digests JSON arguments canonically (object keys sorted, insignificant whitespace
// dropped), so a client re-serializing the same arguments between rounds still matches.
func DigestArgs(args json.RawMessage) [32]byte {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return sha256.Sum256(args)
	}
	canon, err := json.Marshal(v) // encoding/json sorts map keys
	if err != nil {
		return sha256.Sum256(args)
	}
	return sha256.Sum256(canon)
}
