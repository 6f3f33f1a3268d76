package server

import (
	"crypto/subtle"
	"fmt"
	"strings"
	"time"
)

func init() {
	connCmd("ping", -1, []string{"fast"}, cmdPing)
	connCmd("echo", 2, []string{"fast"}, func(c *conn, a [][]byte) { c.w.bulk(a[0]) })
	q := connCmd("quit", -1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, func(c *conn, _ [][]byte) {
		c.w.ok()
		c.closing = true
	})
	q.noAuth, q.multiCtl = true, true
	connCmd("auth", -2, []string{"noscript", "loading", "stale", "fast", "no_auth"}, cmdAuth).noAuth = true
	connCmd("hello", -1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, cmdHello).noAuth = true
	r := connCmd("reset", 1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, cmdReset)
	r.noAuth, r.multiCtl = true, true
	for _, name := range []string{"post", "host:"} {
		a := connCmd(name, -1, []string{"loading", "stale"}, nil)
		a.attack, a.noAuth = true, true
	}
}

func cmdPing(c *conn, a [][]byte) {
	switch len(a) {
	case 0:
		c.w.simple("PONG")
	case 1:
		c.w.bulk(a[0])
	default:
		c.w.err("ERR wrong number of arguments for 'ping' command")
	}
}

// login checks user's password; "" when good, else the error.
func (c *conn) login(user, pass []byte) string {
	users := c.sv.cfg.Users
	if len(users) == 0 && string(user) == "default" {
		return "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	}
	want, ok := users[string(user)]
	if !ok || subtle.ConstantTimeCompare(pass, []byte(want)) != 1 {
		return "WRONGPASS invalid username-password pair or user is disabled."
	}
	c.authed, c.user = true, string(user)
	return ""
}

func cmdAuth(c *conn, a [][]byte) {
	user, pass := []byte("default"), a[0]
	switch len(a) {
	case 1:
	case 2:
		user, pass = a[0], a[1]
	default:
		c.w.err(errSyntax)
		return
	}
	if msg := c.login(user, pass); msg != "" {
		c.w.err(msg)
		return
	}
	c.w.ok()
}

func cmdHello(c *conn, a [][]byte) {
	proto := int64(2)
	if c.w.resp3 {
		proto = 3
	}
	if len(a) > 0 {
		var ok bool
		if proto, ok = parseInt(a[0]); !ok {
			c.w.err("ERR Protocol version is not an integer or out of range")
			return
		}
		if proto != 2 && proto != 3 {
			c.w.err("NOPROTO unsupported protocol version")
			return
		}
	}
	name, setName := "", false
	for i := 1; i < len(a); i++ {
		switch {
		case eq(a[i], "auth") && i+2 < len(a):
			if msg := c.login(a[i+1], a[i+2]); msg != "" {
				c.w.err(msg)
				return
			}
			i += 2
		case eq(a[i], "setname") && i+1 < len(a):
			if !validName(a[i+1]) {
				c.w.err("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			name, setName = string(a[i+1]), true
			i++
		default:
			c.w.err("ERR Syntax error in HELLO option '" + string(a[i]) + "'")
			return
		}
	}
	if !c.authed {
		c.w.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		c.name = name
	}
	c.w.resp3 = proto == 3
	c.w.mapHeader(7)
	c.w.bulkString("server")
	c.w.bulkString("redis")
	c.w.bulkString("version")
	c.w.bulkString(redisVersion)
	c.w.bulkString("proto")
	c.w.int(proto)
	c.w.bulkString("id")
	c.w.int(c.id)
	c.w.bulkString("mode")
	c.w.bulkString("standalone")
	c.w.bulkString("role")
	c.w.bulkString("master")
	c.w.bulkString("modules")
	c.w.array(0)
}

// redisVersion is the Redis whose commands and replies pmkv serve follows.
const redisVersion = "7.0.15"

func cmdReset(c *conn, _ [][]byte) {
	c.multi, c.aborted, c.queued = false, false, nil
	c.sv.locks.unwatch(c)
	c.w.resp3 = false
	c.name = ""
	c.authed, c.user = len(c.sv.cfg.Users) == 0, "default"
	c.w.simple("RESET")
}

func validName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func init() {
	cl := connCmd("client", -2, []string{"admin", "noscript", "loading", "stale"}, cmdClient)
	subs(cl, map[string]int{"setname": 3, "getname": 2, "setinfo": 4, "id": 2, "list": -2, "info": 2,
		"kill": -3, "no-evict": 3, "no-touch": 3, "reply": 3, "help": 2})
}

func cmdClient(c *conn, a [][]byte) {
	switch strings.ToLower(string(a[0])) {
	case "setname":
		if !validName(a[1]) {
			c.w.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.name = string(a[1])
		c.w.ok()
	case "getname":
		if c.name == "" {
			c.w.null()
		} else {
			c.w.bulkString(c.name)
		}
	case "setinfo":
		switch {
		case eq(a[1], "lib-name"):
			c.libName = string(a[2])
		case eq(a[1], "lib-ver"):
			c.libVer = string(a[2])
		default:
			c.w.err("ERR Unrecognized option '" + string(a[1]) + "'")
			return
		}
		c.w.ok()
	case "id":
		c.w.int(c.id)
	case "list":
		c.w.verbatim(c.sv.clientList(a[1:]))
	case "info":
		c.w.verbatim(c.info())
	case "kill":
		c.kill(a[1:])
	case "no-evict", "no-touch", "reply":
		c.w.ok()
	case "help":
		c.w.array(1)
		c.w.simple("CLIENT <subcommand> [<arg> ...]: SETNAME GETNAME SETINFO ID LIST INFO KILL NO-EVICT HELP")
	}
}

// info is the client's CLIENT LIST line.
func (c *conn) info() string {
	now := time.Now()
	flags := "N"
	if c.multi {
		flags = "x"
	}
	multi := int64(-1)
	if c.multi {
		multi = int64(len(c.queued))
	}
	resp := 2
	if c.w.resp3 {
		resp = 3
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=0 name=%s age=%d idle=%d flags=%s db=0 sub=0 psub=0 ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=%d rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s\n",
		c.id, c.addr(), c.laddr(), c.name, int(now.Sub(c.created).Seconds()), (now.UnixMilli()-c.last.Load())/1000,
		flags, multi, len(c.r.buf), c.lastName(), c.user, resp, c.libName, c.libVer)
}

func (sv *Server) clientList(a [][]byte) string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var b strings.Builder
	for c := range sv.conns {
		b.WriteString(c.info())
	}
	return b.String()
}

// kill closes the clients that match CLIENT KILL's filters (or its old
// form, one address).
func (c *conn) kill(a [][]byte) {
	old := len(a) == 1
	var id, addr, laddr, user string
	skipme := true
	if !old {
		for i := 0; i < len(a); i += 2 {
			if i+1 >= len(a) {
				c.w.err(errSyntax)
				return
			}
			v := string(a[i+1])
			switch {
			case eq(a[i], "id"):
				if _, ok := parseInt(a[i+1]); !ok {
					c.w.err("ERR client-id should be greater than 0")
					return
				}
				id = v
			case eq(a[i], "addr"):
				addr = v
			case eq(a[i], "laddr"):
				laddr = v
			case eq(a[i], "user"):
				user = v
			case eq(a[i], "skipme"):
				skipme = !eq(a[i+1], "no")
			case eq(a[i], "type"), eq(a[i], "maxage"):
			default:
				c.w.err(errSyntax)
				return
			}
		}
	} else {
		addr, skipme = string(a[0]), false
	}
	n := c.sv.killWhere(func(x *conn) bool {
		return (id == "" || itoa(x.id) == id) && (addr == "" || x.addr() == addr) &&
			(laddr == "" || x.laddr() == laddr) && (user == "" || x.user == user) && !(skipme && x == c)
	}, c)
	switch {
	case old && n == 0:
		c.w.err("ERR No such client")
	case old:
		c.w.ok()
	default:
		c.w.int(int64(n))
	}
}

// killWhere closes the clients matching fn; self closes after its reply.
func (sv *Server) killWhere(fn func(*conn) bool, self *conn) int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	n := 0
	for x := range sv.conns {
		if !fn(x) {
			continue
		}
		n++
		x.killed.Store(true)
		if x == self {
			x.closing = true
		} else {
			x.nc.SetReadDeadline(time.Now())
		}
	}
	return n
}

// lastName is the name of the client's last command (NULL before one).
func (c *conn) lastName() string {
	if cmd := c.lastCmd.Load(); cmd != nil {
		return cmd.name
	}
	return "NULL"
}
