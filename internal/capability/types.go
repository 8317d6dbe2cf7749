package capability

import (
	"encoding/json"
	"fmt"
	"time"
)

// Date is a calendar day without time zone (JSON Schema format "date", RFC 3339 full-date).
// Generated input and output types use it for every `format: date` field, so parsing is strict
// and identical everywhere: "2026-02-30" is an error, not March 2nd.
type Date struct{ t time.Time }

// NewDate returns the Date of year, month, day (normalised by time.Date).
func NewDate(year int, month time.Month, day int) Date {
	return Date{time.Date(year, month, day, 0, 0, 0, 0, time.UTC)}
}

// DateOf returns the calendar day of t in t's location.
func DateOf(t time.Time) Date { return NewDate(t.Date()) }

// ParseDate parses YYYY-MM-DD strictly.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return Date{}, fmt.Errorf("%q is not a date in the form YYYY-MM-DD", s)
	}
	return Date{t}, nil
}

// Time returns midnight UTC of the day.
func (d Date) Time() time.Time { return d.t }

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d.t.IsZero() }

// AddDays returns d moved by n days.
func (d Date) AddDays(n int) Date { return Date{d.t.AddDate(0, 0, n)} }

// Before reports whether d is before o.
func (d Date) Before(o Date) bool { return d.t.Before(o.t) }

// After reports whether d is after o.
func (d Date) After(o Date) bool { return d.t.After(o.t) }

// String renders YYYY-MM-DD.
func (d Date) String() string { return d.t.Format(time.DateOnly) }

// MarshalJSON renders "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON parses "YYYY-MM-DD" strictly.
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a date must be a string in the form YYYY-MM-DD")
	}
	p, err := ParseDate(s)
	if err != nil {
		return err
	}
	*d = p
	return nil
}
