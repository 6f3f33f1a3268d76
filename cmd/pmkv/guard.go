package main

import (
	"fmt"
	"net"
	"sync/atomic"
)

// guardConn measures the requests a client sends before redcon parses
// them: redcon buffers a request until it is whole (a bulk length of
// 10^15 waits for its bytes, growing the buffer as they come; one near
// 2^63 overflows its index arithmetic), so the server bounds each request
// here. It follows only RESP's framing (an array count, then each bulk
// string's length and bytes, or an inline line), never the commands: a
// request over max bytes, a bulk length over it or an array of more than
// maxArgs elements gets an error reply, and the connection is closed, as
// Redis does for a request over its proto-max-bulk-len.
type guardConn struct {
	net.Conn
	max     int64
	state   int
	num     int64 // the number being read (count or length)
	neg     bool
	args    int64 // bulk strings left in this array
	skip    int64 // bytes of the current bulk string (and its CRLF) left
	total   int64 // bytes of the current request so far
	refused atomic.Bool
}

const maxArgs = 1 << 20

const (
	gStart = iota
	gCount
	gBulkHeader
	gBulkLen
	gSkip
	gInline
	gOff // a framing error: redcon replies and closes
)

func (g *guardConn) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	if n > 0 && g.state != gOff {
		if msg := g.scan(p[:n]); msg != "" {
			g.refused.Store(true)
			g.Conn.Write([]byte("-ERR " + msg + "\r\n"))
			return 0, fmt.Errorf("pmkv serve: %s", msg)
		}
	}
	return n, err
}

func (g *guardConn) scan(b []byte) string {
	for i := 0; i < len(b); i++ {
		c := b[i]
		g.total++
		if g.total > g.max && g.state != gStart {
			return fmt.Sprintf("request over %d bytes (-max-request)", g.max)
		}
		switch g.state {
		case gStart:
			g.total = 1
			g.num, g.neg = 0, false
			if c == '*' {
				g.state = gCount
			} else {
				g.state = gInline
			}
		case gInline:
			if c == '\n' {
				g.state = gStart
			}
		case gCount, gBulkLen:
			switch {
			case c >= '0' && c <= '9':
				if g.num <= 1<<40 { // beyond every limit: stop growing
					g.num = g.num*10 + int64(c-'0')
				}
			case c == '-':
				g.neg = true
			case c == '\r':
			case c == '\n':
				if g.neg {
					g.state = gOff // redcon answers the bad length
					return ""
				}
				if g.state == gCount {
					if g.num > maxArgs {
						return fmt.Sprintf("array of %d arguments: at most %d", g.num, maxArgs)
					}
					g.args = g.num
					g.state = gBulkHeader
					if g.args == 0 {
						g.state = gStart
					}
				} else {
					if g.num > g.max || g.total+g.num > g.max {
						return fmt.Sprintf("bulk string of %d bytes: requests are at most %d bytes (-max-request)", g.num, g.max)
					}
					g.skip = g.num + 2
					g.state = gSkip
				}
				g.num = 0
			default:
				g.state = gOff
				return ""
			}
		case gBulkHeader:
			if c != '$' {
				g.state = gOff
				return ""
			}
			g.state, g.num, g.neg = gBulkLen, 0, false
		case gSkip:
			k := min(g.skip, int64(len(b)-i))
			g.skip -= k
			g.total += k - 1
			i += int(k) - 1
			if g.skip == 0 {
				g.args--
				g.state = gBulkHeader
				if g.args == 0 {
					g.state = gStart
				}
			}
		}
	}
	return ""
}

// guardListener wraps each accepted connection in a guardConn.
type guardListener struct {
	net.Listener
	max int64
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c, max: l.max}, nil
}
