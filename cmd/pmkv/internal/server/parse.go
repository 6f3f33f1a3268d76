package server

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/braid-pm/braid/kv"
)

// Redis's reply texts for bad arguments.
const (
	errNotInt    = "ERR value is not an integer or out of range"
	errNotFloat  = "ERR value is not a valid float"
	errSyntax    = "ERR syntax error"
	errOverflow  = "ERR increment or decrement would overflow"
	errNaN       = "ERR increment would produce NaN or Infinity"
	errTooBig    = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errNoKey     = "ERR no such key"
	errBitOffset = "ERR bit offset is not an integer or out of range"
)

// parseInt parses a 64-bit integer as Redis's string2ll does: optional
// '-', no '+', no spaces, no leading zeros.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// parseFloat parses a long double as Redis's INCRBYFLOAT does: no
// spaces, no NaN; inf is allowed as an input.
func parseFloat(b []byte) (*big.Float, bool) {
	s := string(b)
	if s == "" || strings.TrimSpace(s) != s {
		return nil, false
	}
	ls := strings.ToLower(strings.TrimLeft(s, "+-"))
	if ls == "inf" || ls == "infinity" {
		f := new(big.Float).SetInf(strings.HasPrefix(s, "-"))
		return f, true
	}
	if strings.Contains(ls, "nan") || strings.HasPrefix(ls, "0x") {
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 10, longDouble, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	return f, true
}

// longDouble is the mantissa of x86's long double, which Redis's
// INCRBYFLOAT computes with.
const longDouble = 64

// formatLongDouble prints f as Redis's ld2string in human mode: %.17Lf
// with the trailing zeros (and point) removed.
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func isInfOrBig(f *big.Float) bool {
	if f.IsInf() {
		return true
	}
	x, _ := f.Float64()
	return math.IsInf(x, 0)
}

// storeErr answers a store error: a key or value over the store's limits
// is the client's error, anything else the server's.
func (c *conn) storeErr(err error) {
	var re interface{ RESPError() string } // a Backend's own reply (replica's redirects)
	switch {
	case errors.As(err, &re):
		c.w.err(re.RESPError())
	case errors.Is(err, ErrNoExpiry):
		c.w.err("ERR " + err.Error())
	case errors.Is(err, kv.ErrTooLarge):
		// Redis's text, then kv's sizes with pmkv's flag names (the
		// batch and package prefixes are the server's business).
		msg := err.Error()
		if i := strings.LastIndex(msg, "too large: "); i >= 0 {
			msg = msg[i+len("too large: "):]
		}
		msg = strings.NewReplacer("Options.MaxValue", "pmkv -maxvalue", "Options.MaxKey", "pmkv -maxkey").Replace(msg)
		c.w.err("ERR string exceeds maximum allowed size (" + msg + ")")
	case errors.Is(err, kv.ErrInvalid):
		c.w.err("ERR " + strings.TrimPrefix(err.Error(), "kv: "))
	default:
		c.w.err("ERR store: " + strings.TrimPrefix(err.Error(), "kv: "))
	}
	c.sv.stats.errors.Add(1)
}

// fits answers an error and reports false when a value of n bytes,
// about to be built, is over the store's limit: errTooBig past MaxBulk
// (Redis's text), else the store's -maxvalue named.
func (c *conn) fits(n int64) bool {
	switch {
	case n > c.sv.cfg.MaxBulk:
		c.w.err(errTooBig)
	case n > c.sv.cfg.MaxValue:
		c.w.err(fmt.Sprintf("ERR value of %d bytes is over the store's limit of %d (the store's -maxvalue)", n, c.sv.cfg.MaxValue))
	default:
		return true
	}
	c.sv.stats.errors.Add(1)
	return false
}

// get is t.get of a string answering a store error, and WRONGTYPE for a
// typed value (types.go); ok reports a live entry, fail an error already
// answered. e.Value is the string (unescaped).
func (c *conn) get(t *tx, key []byte) (e Entry, ok, fail bool) {
	e, ok, fail = c.getRaw(t, key)
	if ok {
		s, str := DecodeString(e.Value)
		if !str {
			c.w.err(errWrongType)
			return e, false, true
		}
		e.Value = s
	}
	return e, ok, fail
}

// getRaw is t.get answering a store error: e.Value is the stored value
// of any type (for the commands on keys of every type).
func (c *conn) getRaw(t *tx, key []byte) (e Entry, ok, fail bool) {
	e, ok, err := t.get(key)
	if err != nil {
		c.storeErr(err)
		return e, false, true
	}
	return e, ok, false
}

func eq(b []byte, s string) bool { return strings.EqualFold(string(b), s) }
