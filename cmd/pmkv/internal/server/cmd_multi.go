package server

func init() {
	m := []string{"noscript", "loading", "stale", "fast", "allow_busy"}
	for name, fn := range map[string]func(*conn, [][]byte){
		"multi": cmdMulti, "exec": cmdExec, "discard": cmdDiscard, "watch": cmdWatch, "unwatch": cmdUnwatch,
	} {
		arity := 1
		if name == "watch" {
			arity = -2
		}
		connCmd(name, arity, m, fn).multiCtl = true
	}
}

func cmdMulti(c *conn, _ [][]byte) {
	if c.multi {
		c.w.err("ERR MULTI calls can not be nested")
		return
	}
	c.multi, c.aborted, c.queued = true, false, nil
	c.w.ok()
}

func cmdDiscard(c *conn, _ [][]byte) {
	if !c.multi {
		c.w.err("ERR DISCARD without MULTI")
		return
	}
	c.multi, c.aborted, c.queued = false, false, nil
	c.sv.locks.unwatch(c)
	c.w.ok()
}

func cmdWatch(c *conn, a [][]byte) {
	if c.multi {
		c.w.err("ERR WATCH inside MULTI is not allowed")
		return
	}
	t := c.sv.newTx()
	for _, k := range a {
		e, _, err := t.get(k)
		if err != nil {
			c.storeErr(err)
			return
		}
		c.sv.locks.watch(c, k, e.Deadline)
	}
	c.w.ok()
}

func cmdUnwatch(c *conn, _ [][]byte) {
	c.sv.locks.unwatch(c)
	c.w.ok()
}

// cmdExec runs the queued commands as one tx, holding the locks of their
// keys and of the watched ones, so that no write comes between the check
// of the watched keys and the commit.
func cmdExec(c *conn, _ [][]byte) {
	if !c.multi {
		c.w.err("ERR EXEC without MULTI")
		return
	}
	queued, aborted := c.queued, c.aborted
	c.multi, c.aborted, c.queued = false, false, nil
	defer c.sv.locks.unwatch(c)
	if aborted {
		c.w.err("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	var keys [][]byte
	all := false
	flags := command{stale: true} // what the queued commands need together
	for _, a := range queued {
		cmd := lookup(a[0])
		keys = cmd.keys(a, keys)
		all = all || cmd.all
		flags.write = flags.write || cmd.write
		flags.denyoom = flags.denyoom || cmd.denyoom
		flags.stale = flags.stale && cmd.stale
	}
	if msg := c.sv.stateRefusal(&flags); msg != "" {
		c.w.err("EXECABORT Transaction discarded because of: " + msg)
		return
	}
	if err := c.sv.writable(flags.write); err != nil {
		c.storeErr(err)
		return
	}
	for _, w := range c.watched {
		keys = append(keys, []byte(w.key))
	}
	held := c.sv.locks.lock(keys, all)
	defer c.sv.locks.unlock(held)
	t := c.sv.newTx()
	t.write = flags.write
	if c.dirty.Load() || c.watchExpired(t.now) {
		c.w.nullArray()
		return
	}
	mark := len(c.w.b)
	c.w.array(len(queued))
	for _, a := range queued {
		cmd := lookup(a[0])
		if cmd.keyed() {
			t.exec(c, cmd, a)
		} else {
			c.count(cmd, a, func() { cmd.conn(c, a[1:]) })
		}
	}
	if err := t.commit(); err != nil {
		c.w.b = c.w.b[:mark]
		c.storeErr(err)
		return
	}
	if t.prop.on {
		c.sv.feed(t.prop.cmds, true)
	}
}

// watchExpired reports whether a watched key that had a deadline in the
// future at WATCH has expired since.
func (c *conn) watchExpired(now int64) bool {
	for _, w := range c.watched {
		if w.deadline != 0 && w.deadline <= now {
			return true
		}
	}
	return false
}
