package server

import (
	"strconv"
	"strings"
)

// writer builds a connection's replies in RESP2 or, after HELLO 3, RESP3:
// the types RESP3 adds (null, map, set, double, boolean, verbatim
// string) are written as RESP2 does when the client speaks RESP2.
type writer struct {
	b     []byte
	resp3 bool
}

func (w *writer) simple(s string) {
	w.b = append(w.b, '+')
	w.b = append(w.b, s...)
	w.b = append(w.b, '\r', '\n')
}

// err writes an error reply; msg starts with its code (ERR, WRONGTYPE...).
func (w *writer) err(msg string) {
	w.b = append(w.b, '-')
	w.b = append(w.b, strings.NewReplacer("\r", " ", "\n", " ").Replace(msg)...)
	w.b = append(w.b, '\r', '\n')
}

func (w *writer) int(n int64) {
	w.b = append(w.b, ':')
	w.b = strconv.AppendInt(w.b, n, 10)
	w.b = append(w.b, '\r', '\n')
}

func (w *writer) header(c byte, n int) {
	w.b = append(w.b, c)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
	w.b = append(w.b, '\r', '\n')
}

func (w *writer) bulk(p []byte) {
	w.header('$', len(p))
	w.b = append(w.b, p...)
	w.b = append(w.b, '\r', '\n')
}

func (w *writer) bulkString(s string) {
	w.header('$', len(s))
	w.b = append(w.b, s...)
	w.b = append(w.b, '\r', '\n')
}

// null is the absent value: $-1 in RESP2.
func (w *writer) null() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
	} else {
		w.b = append(w.b, "$-1\r\n"...)
	}
}

// nullArray is the absent array: *-1 in RESP2.
func (w *writer) nullArray() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
	} else {
		w.b = append(w.b, "*-1\r\n"...)
	}
}

func (w *writer) array(n int) { w.header('*', n) }

// mapHeader starts a map of n pairs (an array of 2n in RESP2).
func (w *writer) mapHeader(n int) {
	if w.resp3 {
		w.header('%', n)
	} else {
		w.header('*', 2*n)
	}
}

// setHeader starts a set (an array in RESP2).
func (w *writer) setHeader(n int) {
	if w.resp3 {
		w.header('~', n)
	} else {
		w.header('*', n)
	}
}

// verbatim writes text as a verbatim string of format "txt" in RESP3.
func (w *writer) verbatim(text string) {
	if w.resp3 {
		w.header('=', len(text)+4)
		w.b = append(w.b, "txt:"...)
		w.b = append(w.b, text...)
		w.b = append(w.b, '\r', '\n')
	} else {
		w.bulkString(text)
	}
}

func (w *writer) ok() { w.b = append(w.b, "+OK\r\n"...) }

// attribute starts a RESP3 attribute map of n pairs (RESP2 has none: the
// caller writes the pairs only when w.resp3).
func (w *writer) attribute(n int) { w.header('|', n) }

// boolean is #t/#f in RESP3, 1/0 in RESP2.
func (w *writer) boolean(v bool) {
	switch {
	case !w.resp3:
		w.int(map[bool]int64{true: 1, false: 0}[v])
	case v:
		w.b = append(w.b, "#t\r\n"...)
	default:
		w.b = append(w.b, "#f\r\n"...)
	}
}

// bigNumber is (n in RESP3, a bulk string in RESP2.
func (w *writer) bigNumber(n string) {
	if !w.resp3 {
		w.bulkString(n)
		return
	}
	w.b = append(w.b, '(')
	w.b = append(w.b, n...)
	w.b = append(w.b, '\r', '\n')
}
