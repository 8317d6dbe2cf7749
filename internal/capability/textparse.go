package capability

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/neemias/neemias-mcp/internal/jsonscan"
)

// parseNode reads one JSON document into a node tree, object keys in document order, with the
// same values encoding/json's Decoder.Token gives with UseNumber (strings unescaped, numbers
// and booleans as written, invalid UTF-8 replaced). It is a small recursive-descent reader
// because Decoder.Token cost ~70% of rendering a busy Sunday's text: its token stream builds
// and throws away an error value after every value. Strings with escapes or non-UTF-8 bytes
// are rare in a pipeline's output and are unquoted by encoding/json itself, so escapes mean
// exactly what they mean there. FuzzParseNodeMatchesDecoder pins the equivalence.
func parseNode(data []byte) (node, error) {
	p := nodeParser{data: data}
	n, err := p.value(0)
	if err != nil {
		return node{}, err
	}
	p.space()
	if p.pos != len(p.data) {
		return node{}, fmt.Errorf("data after the JSON value at offset %d", p.pos)
	}
	return n, nil
}

// maxNodeDepth is encoding/json's nesting limit, so both readers refuse the same documents.
const maxNodeDepth = 10000

type nodeParser struct {
	data []byte
	pos  int
	// keys and vals are the members of the objects and arrays being read, innermost last: a
	// container's members are copied out into slices of their exact size when it closes, so
	// reading a document costs one allocation per container instead of a growing slice each.
	keys []string
	vals []node
}

func (p *nodeParser) space() { p.pos = jsonscan.Space(p.data, p.pos) }

func (p *nodeParser) errorf(what string) error {
	if p.pos >= len(p.data) {
		return fmt.Errorf("unexpected end of JSON input (%s)", what)
	}
	return fmt.Errorf("invalid character %q at offset %d (%s)", p.data[p.pos], p.pos, what)
}

func (p *nodeParser) value(depth int) (node, error) {
	if depth > maxNodeDepth {
		return node{}, fmt.Errorf("exceeded max depth at offset %d", p.pos)
	}
	p.space()
	if p.pos >= len(p.data) {
		return node{}, p.errorf("looking for a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		return node{kind: nodeScalar, scalar: s}, err
	case c == 't':
		return p.literal("true", node{kind: nodeScalar, scalar: "true"})
	case c == 'f':
		return p.literal("false", node{kind: nodeScalar, scalar: "false"})
	case c == 'n':
		return p.literal("null", node{kind: nodeNull})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return node{}, p.errorf("looking for a value")
}

func (p *nodeParser) literal(word string, n node) (node, error) {
	end, ok := jsonscan.Literal(p.data, p.pos, word)
	if !ok {
		return node{}, p.errorf("in literal " + word)
	}
	p.pos = end
	return n, nil
}

// number takes a number as written, after checking its grammar (RFC 8259 §6).
func (p *nodeParser) number() (node, error) {
	end, ok := jsonscan.Number(p.data, p.pos)
	if !ok {
		p.pos = end
		return node{}, p.errorf("in numeric literal")
	}
	n := node{kind: nodeScalar, scalar: p.text(p.data[p.pos:end])}
	p.pos = end
	return n, nil
}

// str reads a string at p.pos (its opening quote). Plain strings (no escape, valid UTF-8) are
// taken as they are; any other goes to encoding/json.
func (p *nodeParser) str() (string, error) {
	start := p.pos
	end, plain, ok := jsonscan.String(p.data, p.pos)
	if !ok {
		p.pos = end
		return "", fmt.Errorf("invalid string literal at offset %d", start)
	}
	p.pos = end
	raw := p.data[start:end]
	if plain {
		return p.text(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("string at offset %d: %w", start, err)
	}
	return s, nil
}

func (p *nodeParser) object(depth int) (node, error) {
	p.pos++ // {
	n := node{kind: nodeObject}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	keys, vals := len(p.keys), len(p.vals)
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return node{}, p.errorf("looking for beginning of object key string")
		}
		k, err := p.str()
		if err != nil {
			return node{}, err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return node{}, p.errorf("after object key")
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		p.keys = append(p.keys, k)
		p.vals = append(p.vals, v)
		p.space()
		if p.pos >= len(p.data) {
			return node{}, p.errorf("after object key:value pair")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.keys = append([]string(nil), p.keys[keys:]...)
			n.vals = p.takeVals(vals)
			p.keys = p.keys[:keys]
			return n, nil
		default:
			return node{}, p.errorf("after object key:value pair")
		}
	}
}

func (p *nodeParser) array(depth int) (node, error) {
	p.pos++ // [
	n := node{kind: nodeArray}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	vals := len(p.vals)
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		p.vals = append(p.vals, v)
		p.space()
		if p.pos >= len(p.data) {
			return node{}, p.errorf("after array element")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.vals = p.takeVals(vals)
			return n, nil
		default:
			return node{}, p.errorf("after array element")
		}
	}
}

// text is b as a string without a copy: a document's scalars are most of its bytes, and the
// nodes live only while RenderText renders the document, which nothing changes meanwhile
// (data is the pipeline's finalized JSON); the rendered text copies what it keeps.
func (p *nodeParser) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// takeVals moves the values above from off the stack into a slice of their own.
func (p *nodeParser) takeVals(from int) []node {
	out := append([]node(nil), p.vals[from:]...)
	clear(p.vals[from:]) // the stack must not keep the moved nodes' slices alive
	p.vals = p.vals[:from]
	return out
}
