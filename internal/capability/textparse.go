package capability

import (
	"encoding/json"
	"fmt"
	"math"
	"unsafe"

	"github.com/neemias/neemias-mcp/internal/jsonscan"
)

// textNode is one JSON value of a document being rendered as text. A container's members are
// the arena's nodes [lo, hi), in document order (a map would lose the order the spec gives the
// fields, which is the order a reader expects); an object member carries its key. It holds no
// pointer, so the collector never scans an arena and filling one costs no write barrier.
type textNode struct {
	kind   nodeKind
	key    span // the member's key, inside an object
	scalar span // a scalar's text: a string's value, a number or boolean as written
	lo, hi int32
}

// span is a string of the document: its bytes data[off:off+n] as they are, or, for n < 0, the
// unescaped string unescaped[off] (a string with escapes or invalid UTF-8).
type span struct{ off, n int32 }

type nodeKind uint8

const (
	nodeScalar nodeKind = iota
	nodeNull
	nodeObject
	nodeArray
)

// textDoc is a parsed document: every container's members live in one arena, so reading a
// busy Sunday's 54 KB costs no allocation per value or per container (the node tree it
// replaced allocated two slices per object and ~220 KB per document). Docs are pooled by
// RenderText; their strings point into the document's bytes (text), so a doc is only valid
// while its data is, and the rendered text copies what it keeps.
type textDoc struct {
	data []byte
	pos  int
	// nodes is the arena: a container's members are moved here, contiguous, when it closes.
	nodes []textNode
	// stack holds the members of the containers being read, innermost last.
	stack []textNode
	// unescaped are the document's strings that are not their bytes as written.
	unescaped []string
}

func (d *textDoc) members(n *textNode) []textNode { return d.nodes[n.lo:n.hi] }

// str is the string s spans, without a copy: a document's scalars are most of its bytes, and
// the nodes live only while RenderText renders the document, which nothing changes meanwhile
// (data is the pipeline's finalized JSON); the rendered text copies what it keeps.
func (d *textDoc) str(s span) string {
	switch {
	case s.n < 0:
		return d.unescaped[s.off]
	case s.n == 0:
		return ""
	}
	return unsafe.String(&d.data[s.off], int(s.n))
}

// parse reads one JSON document, with the same values encoding/json's Decoder.Token gives
// with UseNumber (strings unescaped, numbers and booleans as written, invalid UTF-8 replaced),
// and refuses what it refuses. It is a small recursive-descent reader because Decoder.Token
// cost ~70% of rendering a busy Sunday's text. Strings with escapes or non-UTF-8 bytes are
// rare in a pipeline's output and are unquoted by encoding/json itself, so escapes mean
// exactly what they mean there. FuzzParseMatchesDecoder pins the equivalence.
func (d *textDoc) parse(data []byte) (textNode, error) {
	if len(data) > math.MaxInt32 {
		return textNode{}, fmt.Errorf("a document of %d bytes is too long to render", len(data))
	}
	d.data, d.pos, d.nodes, d.stack, d.unescaped = data, 0, d.nodes[:0], d.stack[:0], d.unescaped[:0]
	n, err := d.value(0)
	if err != nil {
		return textNode{}, err
	}
	d.space()
	if d.pos != len(d.data) {
		return textNode{}, fmt.Errorf("data after the JSON value at offset %d", d.pos)
	}
	return n, nil
}

// maxNodeDepth is encoding/json's nesting limit, so both readers refuse the same documents.
const maxNodeDepth = 10000

func (d *textDoc) space() { d.pos = jsonscan.Space(d.data, d.pos) }

func (d *textDoc) errorf(what string) error {
	if d.pos >= len(d.data) {
		return fmt.Errorf("unexpected end of JSON input (%s)", what)
	}
	return fmt.Errorf("invalid character %q at offset %d (%s)", d.data[d.pos], d.pos, what)
}

func (d *textDoc) value(depth int) (textNode, error) {
	if depth > maxNodeDepth {
		return textNode{}, fmt.Errorf("exceeded max depth at offset %d", d.pos)
	}
	d.space()
	if d.pos >= len(d.data) {
		return textNode{}, d.errorf("looking for a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.container(depth, nodeObject, '}')
	case c == '[':
		return d.container(depth, nodeArray, ']')
	case c == '"':
		s, err := d.string()
		return textNode{kind: nodeScalar, scalar: s}, err
	case c == 't':
		return d.literal("true", textNode{kind: nodeScalar, scalar: span{int32(d.pos), 4}})
	case c == 'f':
		return d.literal("false", textNode{kind: nodeScalar, scalar: span{int32(d.pos), 5}})
	case c == 'n':
		return d.literal("null", textNode{kind: nodeNull})
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return textNode{}, d.errorf("looking for a value")
}

func (d *textDoc) literal(word string, n textNode) (textNode, error) {
	end, ok := jsonscan.Literal(d.data, d.pos, word)
	if !ok {
		return textNode{}, d.errorf("in literal " + word)
	}
	d.pos = end
	return n, nil
}

// number takes a number as written, after checking its grammar (RFC 8259 §6).
func (d *textDoc) number() (textNode, error) {
	end, ok := jsonscan.Number(d.data, d.pos)
	if !ok {
		d.pos = end
		return textNode{}, d.errorf("in numeric literal")
	}
	n := textNode{kind: nodeScalar, scalar: span{int32(d.pos), int32(end - d.pos)}}
	d.pos = end
	return n, nil
}

// string reads a string at d.pos (its opening quote). Plain strings (no escape, valid UTF-8)
// are taken as they are; any other goes to encoding/json.
func (d *textDoc) string() (span, error) {
	start := d.pos
	end, plain, ok := jsonscan.String(d.data, d.pos)
	if !ok {
		d.pos = end
		return span{}, fmt.Errorf("invalid string literal at offset %d", start)
	}
	d.pos = end
	if plain {
		return span{int32(start + 1), int32(end - start - 2)}, nil
	}
	var s string
	if err := json.Unmarshal(d.data[start:end], &s); err != nil {
		return span{}, fmt.Errorf("string at offset %d: %w", start, err)
	}
	d.unescaped = append(d.unescaped, s)
	return span{int32(len(d.unescaped) - 1), -1}, nil
}

// container reads an object or an array at d.pos (its opening bracket).
func (d *textDoc) container(depth int, kind nodeKind, closing byte) (textNode, error) {
	d.pos++
	object := kind == nodeObject
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == closing {
		d.pos++
		return textNode{kind: kind}, nil
	}
	from := len(d.stack)
	after := "after array element"
	if object {
		after = "after object key:value pair"
	}
	for {
		var key span
		if object {
			d.space()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return textNode{}, d.errorf("looking for beginning of object key string")
			}
			k, err := d.string()
			if err != nil {
				return textNode{}, err
			}
			d.space()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return textNode{}, d.errorf("after object key")
			}
			d.pos++
			key = k
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return textNode{}, err
		}
		v.key = key
		d.stack = append(d.stack, v)
		d.space()
		if d.pos >= len(d.data) {
			return textNode{}, d.errorf(after)
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case closing:
			d.pos++
			n := textNode{kind: kind, lo: int32(len(d.nodes))}
			d.nodes = append(d.nodes, d.stack[from:]...)
			n.hi = int32(len(d.nodes))
			d.stack = d.stack[:from]
			return n, nil
		default:
			return textNode{}, d.errorf(after)
		}
	}
}
