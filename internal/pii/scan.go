package pii

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// MaxDepth is the deepest nesting of arrays and objects a document may have.
const MaxDepth = 512

// ErrInvalidJSON is returned (wrapped) for a document that is not one well-formed JSON value.
var ErrInvalidJSON = errors.New("pii: invalid JSON")

// Scanner finds personal data in JSON documents: the pattern detectors always, and the known
// values of one church when it has them. Safe for concurrent use.
type Scanner struct {
	known *KnownValues
}

// NewScanner returns a scanner with the pattern detectors and known's values (nil: none).
func NewScanner(known *KnownValues) *Scanner { return &Scanner{known: known} }

// Scan walks doc and returns a finding for every detector match, in document order. Every
// member is read, duplicate names included, so no value hides behind a later duplicate.
func (s *Scanner) Scan(doc json.RawMessage) ([]Finding, error) {
	w := walker{s: s}
	if err := w.run(doc); err != nil {
		return nil, err
	}
	return w.findings, nil
}

// ScanValue is [Scanner.Scan] on a decoded value (what json.Unmarshal into any produces, or
// anything json.Marshal accepts).
func (s *Scanner) ScanValue(v any) ([]Finding, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("pii: encode value: %w", err)
	}
	return s.Scan(raw)
}

// Redact returns a copy of doc in which every matched text is replaced by
// "[redacted <detector>]" (a JSON number that matched becomes that string), with the findings
// of doc. Member order is kept. A redacted member name that would clash with another gets a
// " 2", " 3"… suffix. Redaction is repeated on each string until a scan finds nothing, so a
// document that Redact returns always scans clean.
func (s *Scanner) Redact(doc json.RawMessage) (json.RawMessage, []Finding, error) {
	w := walker{s: s, out: &bytes.Buffer{}}
	if err := w.run(doc); err != nil {
		return nil, nil, err
	}
	return json.RawMessage(w.out.Bytes()), w.findings, nil
}

// RedactValue is [Scanner.Redact] on a decoded value; the copy is decoded into any (numbers as
// json.Number).
func (s *Scanner) RedactValue(v any) (any, []Finding, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("pii: encode value: %w", err)
	}
	red, findings, err := s.Redact(raw)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(red))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("pii: decode redacted value: %w", err)
	}
	return out, findings, nil
}

// spans returns the spans of all detectors in text, as byte ranges of text. The detectors
// run on the normalized text (see normalize), so that invisible characters and other ways
// of writing a digit or a letter change nothing.
func (s *Scanner) spans(text string) []span {
	n := normalize(text)
	out := patternSpans(n.s, nil)
	out = s.known.spans(n.s, out)
	if n.start != nil {
		for i := range out {
			out[i] = n.span(out[i])
		}
	}
	return out
}

type walker struct {
	s        *Scanner
	dec      *json.Decoder
	out      *bytes.Buffer // nil: scan only
	findings []Finding
}

func (w *walker) run(doc []byte) error {
	w.dec = json.NewDecoder(bytes.NewReader(doc))
	w.dec.UseNumber()
	tok, err := w.dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if err := w.value(tok, "$", 0, false); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the value", ErrInvalidJSON)
	}
	return nil
}

func (w *walker) next() (json.Token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return tok, nil
}

// report adds one finding per detector for spans found at path.
func (w *walker) report(spans []span, path string, inKey bool) {
	seen := map[Detector]bool{}
	for _, sp := range sortSpans(spans) {
		if !seen[sp.det] {
			seen[sp.det] = true
			w.findings = append(w.findings, Finding{Detector: sp.det, Path: path, InKey: inKey})
		}
	}
}

// value handles one value whose first token is tok. hidden is true below a member name that
// held personal data: the path then stops at that member's object.
func (w *walker) value(tok json.Token, path string, depth int, hidden bool) error {
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxDepth {
			return fmt.Errorf("%w: nested deeper than %d", ErrInvalidJSON, MaxDepth)
		}
		switch t {
		case '{':
			return w.object(path, depth+1, hidden)
		case '[':
			return w.array(path, depth+1, hidden)
		}
		return fmt.Errorf("%w: unexpected %v", ErrInvalidJSON, t)
	case string:
		sp := w.s.spans(t)
		w.report(sp, path, false)
		if w.out != nil {
			if len(sp) > 0 {
				t = w.redactString(t, sp)
			}
			writeString(w.out, t)
		}
	case json.Number:
		sp := w.s.spans(string(t))
		w.report(sp, path, false)
		if w.out != nil {
			if len(sp) > 0 {
				writeString(w.out, w.redactString(string(t), sp))
			} else {
				w.out.WriteString(string(t))
			}
		}
	case bool:
		if w.out != nil {
			w.out.WriteString(strconv.FormatBool(t))
		}
	case nil:
		if w.out != nil {
			w.out.WriteString("null")
		}
	}
	return nil
}

func (w *walker) object(path string, depth int, hidden bool) error {
	if w.out != nil {
		w.out.WriteByte('{')
	}
	used := map[string]bool{}  // names written by redaction
	plain := map[string]bool{} // names written as they were
	first := true
	for w.dec.More() {
		tok, err := w.next()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%w: member name expected", ErrInvalidJSON)
		}
		sp := w.s.spans(key)
		w.report(sp, path, true)
		childHidden := hidden || len(sp) > 0
		childPath := path
		if !childHidden {
			childPath = memberPath(path, key)
		}
		if w.out != nil {
			if !first {
				w.out.WriteByte(',')
			}
			// A redacted name gets a suffix when it would clash with a name already written;
			// so does a plain name that a redacted one already took (input duplicates stay).
			if len(sp) > 0 || used[key] {
				base := key
				if len(sp) > 0 {
					base = w.redactString(key, sp)
				}
				key = base
				for n := 2; used[key] || plain[key] && len(sp) > 0; n++ {
					key = base + " " + strconv.Itoa(n)
				}
				used[key] = true
			} else {
				plain[key] = true
			}
			writeString(w.out, key)
			w.out.WriteByte(':')
		}
		first = false
		tok, err = w.next()
		if err != nil {
			return err
		}
		if err := w.value(tok, childPath, depth, childHidden); err != nil {
			return err
		}
	}
	if _, err := w.next(); err != nil { // '}'
		return err
	}
	if w.out != nil {
		w.out.WriteByte('}')
	}
	return nil
}

func (w *walker) array(path string, depth int, hidden bool) error {
	if w.out != nil {
		w.out.WriteByte('[')
	}
	for i := 0; w.dec.More(); i++ {
		tok, err := w.next()
		if err != nil {
			return err
		}
		if w.out != nil && i > 0 {
			w.out.WriteByte(',')
		}
		childPath := path
		if !hidden {
			childPath = path + "[" + strconv.Itoa(i) + "]"
		}
		if err := w.value(tok, childPath, depth, hidden); err != nil {
			return err
		}
	}
	if _, err := w.next(); err != nil { // ']'
		return err
	}
	if w.out != nil {
		w.out.WriteByte(']')
	}
	return nil
}

// redactString replaces the spans of t, then scans the result again until nothing is found
// (replacing text can give a neighbour the boundary it lacked).
func (w *walker) redactString(t string, sp []span) string {
	for range 8 {
		t = replaceSpans(t, sp)
		if sp = w.s.spans(t); len(sp) == 0 {
			return t
		}
	}
	return "[redacted]"
}

func sortSpans(sp []span) []span {
	sort.SliceStable(sp, func(i, j int) bool {
		if sp[i].start != sp[j].start {
			return sp[i].start < sp[j].start
		}
		return sp[i].end > sp[j].end
	})
	return sp
}

// replaceSpans replaces each span by its marker; overlapping spans merge into the first's.
func replaceSpans(t string, sp []span) string {
	sp = sortSpans(sp)
	var b bytes.Buffer
	last := 0
	for i := 0; i < len(sp); {
		cur := sp[i]
		end := cur.end
		j := i + 1
		for ; j < len(sp) && sp[j].start < end; j++ {
			end = max(end, sp[j].end)
		}
		b.WriteString(t[last:cur.start])
		b.WriteString("[redacted " + string(cur.det) + "]")
		last = end
		i = j
	}
	b.WriteString(t[last:])
	return b.String()
}

// isPlainName reports whether key matches [A-Za-z_][A-Za-z0-9_]*.
func isPlainName(key string) bool {
	if key == "" || key[0] >= '0' && key[0] <= '9' {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// memberPath appends a member name: dot notation for plain names, else a bracketed JSON
// string.
func memberPath(path, key string) string {
	if isPlainName(key) {
		return path + "." + key
	}
	var b bytes.Buffer
	writeString(&b, key)
	return path + "[" + b.String() + "]"
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
