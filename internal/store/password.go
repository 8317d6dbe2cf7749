package store

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// The rules of a new local password, wherever it is set (the operator's user set-password,
// the set-password page): at least MinPasswordLen characters, at most MaxPasswordLen bytes
// (the login form reads no more).
const (
	MinPasswordLen = 10
	MaxPasswordLen = 1024
)

// Refusals of [CheckNewPassword].
var (
	ErrPasswordTooShort = fmt.Errorf("the password must have at least %d characters", MinPasswordLen)
	ErrPasswordTooLong  = fmt.Errorf("the password must have at most %d bytes", MaxPasswordLen)
)

// CheckNewPassword applies the rules of a new password before it is hashed.
func CheckNewPassword(password string) error {
	if utf8.RuneCountInString(password) < MinPasswordLen {
		return ErrPasswordTooShort
	}
	if len(password) > MaxPasswordLen {
		return ErrPasswordTooLong
	}
	return nil
}

// The argon2id parameters of new password hashes (OWASP's minimum for argon2id: 19 MiB,
// 2 passes, 1 lane). Stored hashes carry their own parameters, so raising these later does
// not break existing accounts.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// HashPassword hashes password with argon2id and a random salt, in the PHC string format
// stored in users.password_hash: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded
// base64).
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("store: password salt: %w", err)
	}
	return HashPasswordWithSalt(password, salt), nil
}

// HashPasswordWithSalt is [HashPassword] with a given salt: for reproducible demo data only.
func HashPasswordWithSalt(password string, salt []byte) string {
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return phc(salt, key)
}

// DummyPasswordHash is a hash in [HashPassword]'s format and parameters that no password
// matches: a random salt and a random key in place of a derived one. [CheckPassword] against
// it costs exactly what it costs against a real hash (the work is the argon2id of the
// password tried, with the parameters the string names), so a login for an email without an
// account can be made as slow as one with. Making it costs no argon2id work (HashPassword's
// 19 MiB and tens of milliseconds at every start of the server); a password matches it only
// by finding a 256-bit preimage.
func DummyPasswordHash() (string, error) {
	b := make([]byte, argonSaltLen+argonKeyLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("store: dummy password hash: %w", err)
	}
	return phc(b[:argonSaltLen], b[argonSaltLen:]), nil
}

// phc is the PHC string of an argon2id key made with this package's parameters.
func phc(salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// ErrBadPasswordHash is returned by [CheckPassword] for a stored hash it cannot read.
var ErrBadPasswordHash = errors.New("store: unreadable password hash")

// CheckPassword reports whether password matches encoded, a hash made by [HashPassword],
// comparing in constant time. An empty encoded (an account without a local password) never
// matches.
func CheckPassword(encoded, password string) (bool, error) {
	if encoded == "" {
		return false, nil
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, ErrBadPasswordHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrBadPasswordHash
	}
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil {
		return false, ErrBadPasswordHash
	}
	// Bound the work a corrupted or hostile row can demand.
	if mem < 8 || mem > 1<<20 || iters < 1 || iters > 16 || threads < 1 || threads > 16 {
		return false, ErrBadPasswordHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return false, ErrBadPasswordHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false, ErrBadPasswordHash
	}
	got := argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
