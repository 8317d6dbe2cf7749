package httpx

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/neemias/neemias-mcp/internal/jsonscan"
)

// jsonChecker is CheckJSON's reader: the token grammar of encoding/json's Decoder.Token
// (its states, what ends a value, which end of input is a truncation) written as one pass,
// with the checks of the edge (depth, duplicate and case-variant keys) made where the Token
// reader made them, so the first problem in document order decides the answer as before.
type jsonChecker struct {
	data     []byte
	pos      int
	maxDepth int
	state    tokenState
	stack    []checkFrame
	values   int // top-level values seen
}

type tokenState int

// The states of encoding/json's Decoder.Token, by the same names.
const (
	tokenTopValue tokenState = iota
	tokenArrayStart
	tokenArrayValue
	tokenArrayComma
	tokenObjectStart
	tokenObjectKey
	tokenObjectColon
	tokenObjectValue
	tokenObjectComma
)

type checkFrame struct {
	outer tokenState // the state to return to when the container closes
	// keys are an object's keys, folded: a list while it has a handful (a request's objects
	// do), a set past manyKeys, so a body of one huge object costs linear time, not square.
	keys []string
	set  map[string]struct{}
}

const manyKeys = 16

var (
	errNotJSON   = &JSONError{CodeParseError, "request body is not valid JSON"}
	errTruncated = &JSONError{CodeParseError, "request body is not valid JSON (truncated)"}
)

func (c *jsonChecker) run() error {
	for {
		c.space()
		if c.pos == len(c.data) {
			switch {
			case len(c.stack) > 0:
				return errTruncated
			case c.values == 0:
				return &JSONError{CodeParseError, "request body is empty"}
			}
			return nil
		}
		top := len(c.stack) == 0
		switch b := c.data[c.pos]; b {
		case '[', '{':
			if !c.valueAllowed() {
				return errNotJSON
			}
			c.pos++
			if err := c.topValue(top); err != nil {
				return err
			}
			if len(c.stack) >= c.maxDepth {
				return &JSONError{CodeInvalidRequest, fmt.Sprintf("JSON nesting deeper than %d levels", c.maxDepth)}
			}
			f := checkFrame{outer: c.state}
			c.state = tokenArrayStart
			if b == '{' {
				c.state = tokenObjectStart
			}
			c.stack = append(c.stack, f)
		case ']', '}':
			if (b == ']' && c.state != tokenArrayStart && c.state != tokenArrayComma) ||
				(b == '}' && c.state != tokenObjectStart && c.state != tokenObjectComma) {
				return errNotJSON
			}
			c.pos++
			c.state = c.stack[len(c.stack)-1].outer
			c.stack = c.stack[:len(c.stack)-1]
			c.valueEnd()
		case ':':
			if c.state != tokenObjectColon {
				return errNotJSON
			}
			c.pos++
			c.state = tokenObjectValue
		case ',':
			switch c.state {
			case tokenArrayComma:
				c.state = tokenArrayValue
			case tokenObjectComma:
				c.state = tokenObjectKey
			default:
				return errNotJSON
			}
			c.pos++
		case '"':
			if c.state == tokenObjectStart || c.state == tokenObjectKey {
				key, ok := c.str()
				if !ok {
					return errNotJSON
				}
				if err := c.addKey(key); err != nil {
					return err
				}
				c.state = tokenObjectColon
				continue
			}
			fallthrough
		default:
			if !c.valueAllowed() || !c.scalar() {
				return errNotJSON
			}
			if err := c.topValue(top); err != nil {
				return err
			}
			c.valueEnd()
		}
	}
}

func (c *jsonChecker) space() { c.pos = jsonscan.Space(c.data, c.pos) }

func (c *jsonChecker) valueAllowed() bool {
	switch c.state {
	case tokenTopValue, tokenArrayStart, tokenArrayValue, tokenObjectValue:
		return true
	}
	return false
}

func (c *jsonChecker) valueEnd() {
	switch c.state {
	case tokenArrayStart, tokenArrayValue:
		c.state = tokenArrayComma
	case tokenObjectValue:
		c.state = tokenObjectComma
	}
}

// topValue counts a value that begins at the top level: one body, one value.
func (c *jsonChecker) topValue(top bool) error {
	if !top {
		return nil
	}
	if c.values++; c.values > 1 {
		return &JSONError{CodeParseError, "request body holds more than one JSON value"}
	}
	return nil
}

// addKey records key in the innermost object, refusing one equal to a key it already holds
// under Unicode case folding.
func (c *jsonChecker) addKey(key string) error {
	f := &c.stack[len(c.stack)-1]
	folded := foldedKey(key)
	_, inSet := f.set[folded]
	if inSet || slices.Contains(f.keys, folded) {
		return &JSONError{CodeInvalidRequest, fmt.Sprintf("duplicate or case-variant object key %q", strings.Clone(truncate(key, 40)))}
	}
	if f.set != nil || len(f.keys) == manyKeys {
		if f.set == nil {
			f.set = make(map[string]struct{}, 4*manyKeys)
			for _, k := range f.keys {
				f.set[k] = struct{}{}
			}
			f.keys = nil
		}
		f.set[folded] = struct{}{}
		return nil
	}
	f.keys = append(f.keys, folded)
	return nil
}

// foldedKey is the key two keys equal under case folding share: every rune mapped to the
// smallest of its folding orbit, then lower-cased. An ASCII key's is its ASCII lower case
// (K and k fold to K, S and s to S; both lower-case to k and s), computed without that walk.
func foldedKey(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return strings.ToLower(foldKey(key))
		}
	}
	return strings.ToLower(key)
}

// str reads a string at c.pos (its opening quote) and returns its value.
func (c *jsonChecker) str() (string, bool) {
	end, plain, ok := jsonscan.String(c.data, c.pos)
	if !ok {
		return "", false
	}
	raw := c.data[c.pos:end]
	c.pos = end
	if plain {
		// Without a copy: the key lives only while the body is checked, and the body is not
		// changed meanwhile (an error message clones what it quotes).
		if len(raw) == 2 {
			return "", true
		}
		return unsafe.String(&raw[1], len(raw)-2), true
	}
	var v string
	return v, json.Unmarshal(raw, &v) == nil
}

// scalar reads a string, number or literal at c.pos. A number or literal ends at the first
// byte that cannot continue it, whatever that byte is: the token grammar judges it next.
func (c *jsonChecker) scalar() bool {
	var ok bool
	switch b := c.data[c.pos]; {
	case b == '"':
		_, ok = c.str()
		return ok
	case b == 't':
		c.pos, ok = jsonscan.Literal(c.data, c.pos, "true")
	case b == 'f':
		c.pos, ok = jsonscan.Literal(c.data, c.pos, "false")
	case b == 'n':
		c.pos, ok = jsonscan.Literal(c.data, c.pos, "null")
	case b == '-' || ('0' <= b && b <= '9'):
		c.pos, ok = jsonscan.Number(c.data, c.pos)
	}
	return ok
}
