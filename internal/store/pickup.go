package store

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
)

// MaxPickupAttempts is how many wrong pick-up codes lock a check-in (checkins.locked_at); a
// locked check-in can only be closed by staff outside the tool (pass it to RecordFailedPickup).
const MaxPickupAttempts = 5

// A pick-up code is three letters, a hyphen and three digits ("KMT-482"). Letters keep it a
// string: a code of digits only ("048213") is sent as the JSON number 48213 by some clients
// and models, which loses the leading zero. The alphabets leave out characters that read
// alike aloud or on a badge (I, L, O, Q, S, U, Z; 0, 1, 5): 17³ × 7³ ≈ 1.7 million codes, more
// than the six digits they replace, against at most [MaxPickupAttempts] tries.
const (
	pickupLetters = "ACDEFGHJKMNPRTVWXY"
	pickupDigits  = "2346789"
)

// PickupCodeLen is the length of a pick-up code as shown ("KMT-482").
const PickupCodeLen = 7

// pickupSaltLen is the length of the per-check-in salt (checkins.pickup_code_salt).
const pickupSaltLen = 16

// NewPickupCode draws a random pick-up code and a fresh salt, and returns the code (shown once
// to the guardian, never stored) with the salt and its hash under key, to store in
// checkins.pickup_code_salt, pickup_code_hash and pickup_key_id (key.ID).
func NewPickupCode(key PickupKey) (code string, salt, hash []byte, err error) {
	if len(key.Secret) != pickupKeyLen {
		return "", nil, nil, errors.New("store: pick-up code: no key")
	}
	b := make([]byte, 0, PickupCodeLen)
	for i := range 6 {
		alphabet := pickupLetters
		if i >= 3 {
			alphabet = pickupDigits
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", nil, nil, fmt.Errorf("store: pick-up code: %w", err)
		}
		if i == 3 {
			b = append(b, '-')
		}
		b = append(b, alphabet[n.Int64()])
	}
	code = string(b)
	salt = make([]byte, pickupSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", nil, nil, fmt.Errorf("store: pick-up code salt: %w", err)
	}
	return code, salt, key.Hash(salt, code), nil
}

// CanonicalPickupCode is the form a code is hashed and compared in: upper case, without
// spaces or hyphens, so "kmt 482", "KMT-482" and "KMT482" are one code. Codes of digits only
// (issued before the letters) are unchanged by it.
func CanonicalPickupCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || unicode.IsSpace(r):
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

// Hash returns HMAC-SHA256(k.Secret, salt || canonical code), the form
// checkins.pickup_code_hash stores for a check-in whose pickup_key_id is k.ID: without the
// key, which only the server reads, the hash tests no code.
func (k PickupKey) Hash(salt []byte, code string) []byte {
	m := hmac.New(sha256.New, k.Secret)
	m.Write(salt)
	m.Write([]byte(CanonicalPickupCode(code)))
	return m.Sum(nil)
}

// HashPickupCode returns SHA-256(salt || canonical code), the unkeyed form of the hashes stored
// before migration 00103 (pickup_key_id NULL). Only to check those, and for fixtures that
// stand for them: a new code is hashed under a key ([NewPickupCode]).
func HashPickupCode(salt []byte, code string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(CanonicalPickupCode(code)))
	return h.Sum(nil)
}

// CheckPickupCode reports, in constant time, whether code matches the stored salt and hash:
// under key, or, with key nil, as an unkeyed hash of before migration 00103. Find the key of a
// check-in's pickup_key_id with [PickupKeys.Get].
func CheckPickupCode(key *PickupKey, salt, hash []byte, code string) bool {
	want := HashPickupCode(salt, code)
	if key != nil {
		want = key.Hash(salt, code)
	}
	return subtle.ConstantTimeCompare(want, hash) == 1
}
