package server

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Limits of Redis's request framing (networking.c): an inline request or
// a multibulk header line without its newline may grow to 64 KiB; an
// unauthenticated client may send at most 10 arguments of 16 KiB.
const (
	inlineMax    = 64 << 10
	unauthArgs   = 10
	unauthBulk   = 16 << 10
	maxMultibulk = 1<<31 - 1
	readChunk    = 16 << 10
	growStep     = 4 << 20
)

// errProtocol is a framing error: its text is the reply, then the
// connection closes, as Redis does.
type errProtocol struct{ msg string }

func (e *errProtocol) Error() string { return "Protocol error: " + e.msg }

// reader splits a connection's bytes into commands with Redis's rules:
// multibulk (*N then N $len bulk strings) or inline (a line split on
// spaces, with quotes). Lengths are checked on the header, before any
// byte of the argument is buffered, so that a client cannot make the
// server buffer more than maxBulk per argument.
type reader struct {
	rd      io.Reader
	buf     []byte
	r, w    int
	maxBulk int64
	authed  func() bool
	out     bool // commands returned point into buf (until release)
	// a multibulk request in progress: its start in buf, the offsets of
	// the arguments read so far, how many are left, and the length of the
	// one being read (-1 while its header is awaited)
	start int
	marks []int
	left  int
	bulk  int64
	multi bool
	err   error // a framing error is final
}

func newReader(rd io.Reader, maxBulk int64, authed func() bool) *reader {
	return &reader{rd: rd, buf: make([]byte, readChunk), maxBulk: maxBulk, authed: authed, bulk: -1}
}

// fill reads more bytes, making room for at least need more: the command
// being read moves to the front, or to a larger buffer (the commands
// returned before it keep the old one).
func (r *reader) fill(need int) error {
	if len(r.buf)-r.w < need {
		from := r.r
		if r.multi {
			from = r.start
		}
		dst := r.buf
		if size := r.w - from + need; r.out || size > len(r.buf) {
			dst = make([]byte, max(size, 2*len(r.buf)))
		}
		n := copy(dst, r.buf[from:r.w])
		r.buf = dst
		r.r -= from
		r.w = n
		r.start = 0
		for i := range r.marks {
			r.marks[i] -= from
		}
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// buffered reports whether unparsed bytes are waiting.
func (r *reader) buffered() bool { return r.r < r.w }

// release lets the buffer be reused: the commands returned so far are no
// longer referenced.
func (r *reader) release() {
	r.out = false
	if r.r == r.w && !r.multi {
		r.r, r.w = 0, 0
		if len(r.buf) > 1<<20 {
			r.buf = make([]byte, readChunk)
		}
	}
}

// next returns the next command, reading only when nothing whole is
// buffered and block is set; nil, nil when not blocking and none is
// whole. An empty command (an empty line, *0, *-1) is skipped.
func (r *reader) next(block bool) ([][]byte, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		args, done, err := r.parse()
		if err != nil {
			r.err = err
			return nil, err
		}
		if done {
			if len(args) == 0 {
				continue
			}
			r.out = true
			return args, nil
		}
		if !block {
			return nil, nil
		}
		need := 1
		if r.multi && r.bulk >= 0 {
			// room for the argument, growing by at most growStep a read
			// (a length alone reserves no memory: the bytes must come)
			need = min(int(r.bulk)+2-(r.w-r.r), growStep)
		}
		if err := r.fill(max(need, 1)); err != nil {
			r.err = err
			return nil, err
		}
	}
}

// parse takes one command off the buffer if it is whole (done).
func (r *reader) parse() (args [][]byte, done bool, err error) {
	if !r.multi {
		if r.r == r.w {
			return nil, false, nil
		}
		if r.buf[r.r] != '*' {
			return r.inline()
		}
		begin := r.r
		line, ok, err := r.line("mbulk count string")
		if !ok || err != nil {
			return nil, false, err
		}
		n, perr := strconv.ParseInt(string(line[1:]), 10, 64)
		if perr != nil || n > maxMultibulk {
			return nil, false, &errProtocol{"invalid multibulk length"}
		}
		if n <= 0 {
			return nil, true, nil
		}
		if n > unauthArgs && !r.authed() {
			return nil, false, &errProtocol{"unauthenticated multibulk length"}
		}
		r.multi, r.left, r.bulk = true, int(n), -1
		r.start = begin
		r.marks = make([]int, 0, 2*min(n, 1024))
	}
	for r.left > 0 {
		if r.bulk < 0 {
			line, ok, err := r.line("bulk count string")
			if !ok || err != nil {
				return nil, false, err
			}
			if line[0] != '$' {
				return nil, false, &errProtocol{fmt.Sprintf("expected '$', got '%c'", line[0])}
			}
			n, perr := strconv.ParseInt(string(line[1:]), 10, 64)
			if perr != nil || n < 0 || n > r.maxBulk {
				return nil, false, &errProtocol{"invalid bulk length"}
			}
			if n > unauthBulk && !r.authed() {
				return nil, false, &errProtocol{"unauthenticated bulk length"}
			}
			r.bulk = n
		}
		if int64(r.w-r.r) < r.bulk+2 {
			return nil, false, nil
		}
		r.marks = append(r.marks, r.r, r.r+int(r.bulk))
		r.r += int(r.bulk) + 2
		r.left--
		r.bulk = -1
	}
	args = make([][]byte, len(r.marks)/2)
	for i := range args {
		a, b := r.marks[2*i], r.marks[2*i+1]
		args[i] = r.buf[a:b:b]
	}
	r.marks, r.multi = nil, false
	return args, true, nil
}

// line returns the next line (without CRLF) if it is whole; a header
// line longer than 64 KiB without its newline is an error named what.
func (r *reader) line(what string) ([]byte, bool, error) {
	i := bytes.IndexByte(r.buf[r.r:r.w], '\n')
	if i < 0 {
		if r.w-r.r > inlineMax {
			return nil, false, &errProtocol{"too big " + what}
		}
		return nil, false, nil
	}
	line := r.buf[r.r : r.r+i]
	r.r += i + 1
	return bytes.TrimSuffix(line, []byte{'\r'}), true, nil
}

func (r *reader) inline() ([][]byte, bool, error) {
	line, ok, err := r.line("inline request")
	if !ok || err != nil {
		return nil, false, err
	}
	args, err := splitArgs(line)
	if err != nil {
		return nil, false, err
	}
	return args, true, nil
}

var errUnbalanced = &errProtocol{"unbalanced quotes in request"}

// splitArgs splits an inline request as Redis's sdssplitargs does:
// spaces separate arguments; "..." takes \n \r \t \b \a \\ \" and \xHH
// escapes; '...' takes \'; a closing quote must be followed by a space
// or the end.
func splitArgs(line []byte) ([][]byte, error) {
	var args [][]byte
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		var cur []byte
		var err error
		cur, i, err = splitArg(line, i)
		if err != nil {
			return nil, err
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == 0
}

func splitArg(line []byte, i int) ([]byte, int, error) {
	cur := []byte{}
	inq, insq := false, false
	for ; ; i++ {
		if i == len(line) {
			if inq || insq {
				return nil, 0, errUnbalanced
			}
			return cur, i, nil
		}
		c := line[i]
		switch {
		case inq:
			switch {
			case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				v, _ := strconv.ParseUint(string(line[i+2:i+4]), 16, 8)
				cur = append(cur, byte(v))
				i += 3
			case c == '\\' && i+1 < len(line):
				i++
				cur = append(cur, unescape(line[i]))
			case c == '"':
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return nil, 0, errUnbalanced
				}
				return cur, i + 1, nil
			default:
				cur = append(cur, c)
			}
		case insq:
			switch {
			case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				cur = append(cur, '\'')
			case c == '\'':
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return nil, 0, errUnbalanced
				}
				return cur, i + 1, nil
			default:
				cur = append(cur, c)
			}
		case isSpace(c):
			return cur, i, nil
		case c == '"':
			inq = true
		case c == '\'':
			insq = true
		default:
			cur = append(cur, c)
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
