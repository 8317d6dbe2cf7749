package attendanceimport

import (
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

func TestParseClock(t *testing.T) {
	day := time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in     string
		want   int // minutes; -1: refused
		reason string
	}{
		{"09:30", 9*60 + 30, ""},
		{"9:30", 9*60 + 30, ""},
		{"09:30:59", 9*60 + 30, ""},
		{"9h30", 9*60 + 30, ""},
		{"9H", 9 * 60, ""},
		{"9:30 AM", 9*60 + 30, ""},
		{"9:30 a.m.", 9*60 + 30, ""},
		{"12:05 PM", 12*60 + 5, ""},
		{"12:05 am", 5, ""},
		{"7 pm", 19 * 60, ""},
		{"00:00", 0, ""},
		{"23:59", 23*60 + 59, ""},
		{"15/06/2025 09:30", 9*60 + 30, ""},
		{"2025-06-15T09:30:00", 9*60 + 30, ""},
		{"16/06/2025 09:30", -1, "on another day than the row's date"},
		{"24:00", -1, "does not exist"},
		{"9:60", -1, "does not exist"},
		{"13:00 PM", -1, "does not exist"},
		{"9", -1, "readable time"},
		{"9.30", -1, "readable time"},
		{"manhã", -1, "readable time"},
		{"0.395833", -1, "readable time"},
	} {
		got, reason := parseClock(tc.in, "Entrada", day, rosterimport.OrderDMY)
		switch {
		case tc.want >= 0 && (reason != nil || got != tc.want):
			t.Errorf("parseClock(%q) = %d, %v; want %d", tc.in, got, reason, tc.want)
		case tc.want < 0 && (reason == nil || !strings.Contains(reason.EN, tc.reason) || reason.PT == ""):
			t.Errorf("parseClock(%q) reason %v, want one about %q", tc.in, reason, tc.reason)
		case reason != nil && len(tc.in) > 3 && strings.Contains(reason.EN+reason.PT, tc.in):
			t.Errorf("parseClock(%q): the reason quotes the cell: %v", tc.in, reason)
		}
	}
}

func TestHandleOf(t *testing.T) {
	for in, want := range map[string]string{"K7M2QX": "K7M2QX", "k7m2qx": "K7M2QX", "K7M-2QX": "K7M2QX", " K7M 2QX ": "K7M2QX"} {
		if got, ok := handleOf(in); !ok || got != want {
			t.Errorf("handleOf(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"K7M2Q", "K7M2QXY", "ILOU12", "Ana Souza", ""} {
		if _, ok := handleOf(in); ok {
			t.Errorf("handleOf(%q) is a handle", in)
		}
	}
}

// TestHeaderAliases: the header names the docs and the brief name, in both languages, and
// those of `export attendance`, are recognized; the roster's child and class names too.
func TestHeaderAliases(t *testing.T) {
	for in, want := range map[string]Field{
		"Criança": FieldChild, "Nome da criança": FieldChild, "Child": FieldChild, "Child's name": FieldChild, "NOME": FieldChild,
		"Sobrenome": FieldChildLast, "Código": FieldHandle, "Handle": FieldHandle, "Data de nascimento": FieldBirthDate, "DOB": FieldBirthDate,
		"Data": FieldDate, "Date": FieldDate, "Dia": FieldDate, "Data do culto": FieldDate, "Service date": FieldDate,
		"Turma": FieldClass, "Class": FieldClass, "Sala": FieldClass,
		"Entrada": FieldCheckIn, "Check-in": FieldCheckIn, "checkin": FieldCheckIn, "Checked in": FieldCheckIn, "Hora de entrada": FieldCheckIn,
		"Saída": FieldCheckOut, "Check-out": FieldCheckOut, "SAIDA": FieldCheckOut, "Picked up": FieldCheckOut, "Retirada": FieldCheckOut,
	} {
		if got, ok := Schema.FieldOf(in); !ok || got != want {
			t.Errorf("header %q: %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"Retirada por", "Picked up by", "Responsável", "Observações"} {
		if got, ok := Schema.FieldOf(in); ok {
			t.Errorf("header %q is %q, want no field", in, got)
		}
	}
}
