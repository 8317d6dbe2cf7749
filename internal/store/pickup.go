package store

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math/big"
)

// MaxPickupAttempts is how many wrong pick-up codes lock a check-in (checkins.locked_at); a
// locked check-in can only be closed by staff outside the tool (pass it to RecordFailedPickup).
const MaxPickupAttempts = 5

// PickupCodeLen is the number of digits of a pick-up code.
const PickupCodeLen = 6

// pickupSaltLen is the length of the per-check-in salt (checkins.pickup_code_salt).
const pickupSaltLen = 16

// NewPickupCode draws a random pick-up code of [PickupCodeLen] digits and a fresh salt, and
// returns the code (shown once to the guardian, never stored) with the salt and hash to store
// in checkins.pickup_code_salt and checkins.pickup_code_hash.
func NewPickupCode() (code string, salt, hash []byte, err error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", nil, nil, fmt.Errorf("store: pick-up code: %w", err)
	}
	code = fmt.Sprintf("%0*d", PickupCodeLen, n.Int64())
	salt = make([]byte, pickupSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", nil, nil, fmt.Errorf("store: pick-up code salt: %w", err)
	}
	return code, salt, HashPickupCode(salt, code), nil
}

// HashPickupCode returns SHA-256(salt || code), the form checkins.pickup_code_hash stores.
func HashPickupCode(salt []byte, code string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(code))
	return h.Sum(nil)
}

// CheckPickupCode reports, in constant time, whether code matches the stored salt and hash.
func CheckPickupCode(salt, hash []byte, code string) bool {
	return subtle.ConstantTimeCompare(HashPickupCode(salt, code), hash) == 1
}
