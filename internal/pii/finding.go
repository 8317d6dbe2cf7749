package pii

import (
	"log/slog"
)

// Detector names the rule that found personal data. Its values are stable: they appear in
// audit rows and in redaction markers.
type Detector string

// The detectors.
const (
	DetectorCPF            Detector = "cpf"
	DetectorCNPJ           Detector = "cnpj"
	DetectorPhone          Detector = "phone"
	DetectorEmail          Detector = "email"
	DetectorKnownName      Detector = "known_name"
	DetectorKnownPhone     Detector = "known_phone"
	DetectorKnownBirthDate Detector = "known_birth_date"
)

// Finding says that a detector matched somewhere in a JSON document. It deliberately has no
// field for the matched text: a finding can be logged, audited and returned to a caller.
type Finding struct {
	Detector Detector
	// Path is a JSON path (RFC 9535 normalized-path syntax, with dot notation for plain member
	// names): "$.arguments.guardian.phone", "$.content[0].text", `$["a b"]`.
	Path string
	// InKey is true when the data is in an object member's name rather than in a value; Path
	// is then the object's path.
	InKey bool
}

// String returns "detector at path", never a value.
func (f Finding) String() string {
	s := string(f.Detector) + " at " + f.Path
	if f.InKey {
		s += " (member name)"
	}
	return s
}

// LogValue logs the detector and the path only.
func (f Finding) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("detector", string(f.Detector)), slog.String("path", f.Path)}
	if f.InKey {
		attrs = append(attrs, slog.Bool("in_key", true))
	}
	return slog.GroupValue(attrs...)
}

var _ slog.LogValuer = Finding{}
