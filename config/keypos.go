package config

import (
	"bytes"

	"github.com/BurntSushi/toml"
)

// keyLines returns the 1-based line of every key declaration of a TOML
// document that github.com/BurntSushi/toml has already parsed without error,
// aligned with md.Keys(): element i is the line of keys[i].
//
// BurntSushi/toml v1.6.0 records key positions but does not export them, so
// this is a small scanner over the same text. It relies on MetaData.Keys()
// listing exactly one entry per table header ([t], [[t]]) and per key/value
// pair (including pairs inside inline tables) in document order. The scanner
// recognises the same declarations and skips values, strings and comments.
// As a guard, the last part of every bare key found is compared with the
// corresponding md key; on any disagreement keyLines returns nil and errors
// are reported without a line instead of with a wrong one.
func keyLines(src []byte, keys []toml.Key) []int {
	s := &keyScanner{src: src, line: 1}
	for _, bom := range [][]byte{{0xef, 0xbb, 0xbf}, {0xff, 0xfe}, {0xfe, 0xff}} {
		if bytes.HasPrefix(src, bom) {
			s.pos = len(bom)
			break
		}
	}
	s.document()
	if len(s.found) != len(keys) {
		return nil
	}
	lines := make([]int, len(keys))
	for i, f := range s.found {
		if f.bare != "" && f.bare != keys[i][len(keys[i])-1] {
			return nil
		}
		lines[i] = f.line
	}
	return lines
}

// foundKey is one key declaration seen by keyScanner: its line and, if
// its last part was a bare key, that part's text (quoted parts are not
// unescaped and not compared).
type foundKey struct {
	line int
	bare string
}

// keyScanner walks a syntactically valid TOML document. It is lenient:
// on input it does not understand it stops, and keyLines then detects the
// count mismatch.
type keyScanner struct {
	src   []byte
	pos   int
	line  int
	found []foundKey
}

func (s *keyScanner) eof() bool { return s.pos >= len(s.src) }

func (s *keyScanner) peek() byte { return s.src[s.pos] }

// advance moves one byte forward, counting lines.
func (s *keyScanner) advance() {
	if s.src[s.pos] == '\n' {
		s.line++
	}
	s.pos++
}

// skipSpace skips blanks, and newlines and comments too if multiline.
func (s *keyScanner) skipSpace(multiline bool) {
	for !s.eof() {
		switch c := s.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			s.advance()
		case c == '\n' && multiline:
			s.advance()
		case c == '#' && multiline:
			s.skipComment()
		default:
			return
		}
	}
}

func (s *keyScanner) skipComment() {
	for !s.eof() && s.peek() != '\n' {
		s.advance()
	}
}

// document scans top-level lines: table headers and key/value pairs.
func (s *keyScanner) document() {
	for {
		s.skipSpace(true)
		if s.eof() {
			return
		}
		start := s.pos
		if s.peek() == '[' {
			s.advance()
			if !s.eof() && s.peek() == '[' {
				s.advance()
			}
			s.key(']')
			for !s.eof() && s.peek() == ']' {
				s.advance()
			}
		} else {
			s.key('=')
			if s.eof() || s.peek() != '=' {
				return
			}
			s.advance()
			s.value()
		}
		if s.pos == start {
			return // no progress: not TOML we understand
		}
	}
}

// key scans a dotted key up to (not including) the terminator byte and
// records it.
func (s *keyScanner) key(term byte) {
	line := s.line
	var last string
	for {
		s.skipSpace(false)
		if s.eof() {
			return
		}
		switch c := s.peek(); c {
		case '"', '\'':
			s.str()
			last = ""
		default:
			begin := s.pos
			for !s.eof() && isBareKeyByte(s.peek()) {
				s.advance()
			}
			if s.pos == begin {
				return
			}
			last = string(s.src[begin:s.pos])
		}
		s.skipSpace(false)
		if s.eof() {
			return
		}
		switch s.peek() {
		case '.':
			s.advance()
		case term:
			s.found = append(s.found, foundKey{line: line, bare: last})
			return
		default:
			return
		}
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value skips one value: a string, array, inline table or bare token
// (number, boolean, date-time, which may contain a space).
func (s *keyScanner) value() {
	s.skipSpace(false)
	if s.eof() {
		return
	}
	switch s.peek() {
	case '"', '\'':
		s.str()
	case '[':
		s.advance()
		for {
			s.skipSpace(true)
			if s.eof() {
				return
			}
			switch s.peek() {
			case ']':
				s.advance()
				return
			case ',':
				s.advance()
			default:
				start := s.pos
				s.value()
				if s.pos == start {
					return
				}
			}
		}
	case '{':
		s.advance()
		for {
			s.skipSpace(true)
			if s.eof() {
				return
			}
			switch s.peek() {
			case '}':
				s.advance()
				return
			case ',':
				s.advance()
			default:
				start := s.pos
				s.key('=')
				if s.eof() || s.peek() != '=' {
					return
				}
				s.advance()
				s.value()
				if s.pos == start {
					return
				}
			}
		}
	default:
		for !s.eof() {
			switch s.peek() {
			case ',', ']', '}', '#', '\n':
				return
			}
			s.advance()
		}
	}
}

// str skips a basic, literal or multi-line string starting at the quote.
func (s *keyScanner) str() {
	q := s.peek()
	multi := bytes.HasPrefix(s.src[s.pos:], []byte{q, q, q})
	if multi {
		s.pos += 3
	} else {
		s.advance()
	}
	for !s.eof() {
		c := s.peek()
		switch {
		case c == '\\' && q == '"':
			s.advance()
			if !s.eof() {
				s.advance()
			}
		case c == q && !multi:
			s.advance()
			return
		case c == q && bytes.HasPrefix(s.src[s.pos:], []byte{q, q, q}):
			// A closing delimiter may be preceded by up to two quotes
			// that belong to the content: consume the longest run ≤ 5.
			n := 0
			for !s.eof() && s.peek() == q && n < 5 {
				s.advance()
				n++
			}
			return
		case c == '\n' && !multi:
			return // invalid; stop
		default:
			s.advance()
		}
	}
}
