package config

import (
	"fmt"
	"time"
)

// section reads typed values out of one decoded table, producing errors
// that carry the key's line.
type section struct {
	p      *parseState
	m      map[string]any
	prefix string         // "interface" or "peer"
	lines  map[string]int // key → line
	header int            // line of the section header
	peer   string         // peer label, "" for [interface]
}

// line returns the line of key, or of the section header when the key is
// absent (the place where it should be added).
func (s *section) line(key string) int {
	if l, ok := s.lines[key]; ok && l > 0 {
		return l
	}
	return s.header
}

// errorf returns an *Error for key.
func (s *section) errorf(key string, format string, args ...any) *Error {
	return &Error{File: s.p.file, Line: s.line(key), Key: s.prefix + "." + key, Peer: s.peer,
		Msg: fmt.Sprintf(format, args...)}
}

// wrapf is errorf with an underlying cause.
func (s *section) wrapf(key string, err error, format string, args ...any) *Error {
	e := s.errorf(key, format, args...)
	e.Err = err
	return e
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	}
	return "a date or time"
}

// str returns the string value of key; ok is false if it is absent.
func (s *section) str(key string) (v string, ok bool, err error) {
	raw, ok := s.m[key]
	if !ok {
		return "", false, nil
	}
	v, isStr := raw.(string)
	if !isStr {
		return "", true, s.errorf(key, "must be a string, not %s", typeName(raw))
	}
	return v, true, nil
}

// integer returns the integer value of key, checked against [lo, hi].
func (s *section) integer(key string, lo, hi int64) (v int64, ok bool, err error) {
	raw, ok := s.m[key]
	if !ok {
		return 0, false, nil
	}
	v, isInt := raw.(int64)
	if !isInt {
		return 0, true, s.errorf(key, "must be an integer, not %s", typeName(raw))
	}
	if v < lo || v > hi {
		return 0, true, s.errorf(key, "must be in %d..%d, got %d", lo, hi, v)
	}
	return v, true, nil
}

// boolean returns the boolean value of key.
func (s *section) boolean(key string) (v bool, ok bool, err error) {
	raw, ok := s.m[key]
	if !ok {
		return false, false, nil
	}
	v, isBool := raw.(bool)
	if !isBool {
		return false, true, s.errorf(key, "must be true or false, not %s", typeName(raw))
	}
	return v, true, nil
}

// strings returns the value of key, which must be an array of strings.
func (s *section) strings(key string) (v []string, ok bool, err error) {
	raw, ok := s.m[key]
	if !ok {
		return nil, false, nil
	}
	arr, isArr := raw.([]any)
	if !isArr {
		return nil, true, s.errorf(key, "must be an array of strings, not %s", typeName(raw))
	}
	v = make([]string, len(arr))
	for i, e := range arr {
		str, isStr := e.(string)
		if !isStr {
			return nil, true, s.errorf(key, "must be an array of strings, but element %d is %s", i+1, typeName(e))
		}
		v[i] = str
	}
	return v, true, nil
}
