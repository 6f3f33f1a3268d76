package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/internal/cli"
)

const loadUsage = `Stores the records of FILE (- : standard input), -group of them per kv Apply (durable together
when it returns).
  text:   one 'KEY<tab>VALUE' line per record; KEY and VALUE are taken as
          they are, or unquoted when they start with '"' (Go syntax, as
          pmkv scan prints them); empty lines are skipped.
  binary: records of a key length (uint32 little-endian), the key, a value
          length (uint32 little-endian), the value.
A malformed record or one over the limits stops the load with its line
(text) or byte offset (binary) named; the records before it are loaded.
Interrupted (Ctrl-C), load says how many records are stored (durable) and
the -skip that resumes it: the same command with -skip N stores the
records after the first N.`

func loadCommand(sf *storeFlags) cli.Command {
	var format string
	var group int
	var skip int64
	return storeCommand{name: "load", short: "store the key/value lines (or binary records) of FILE", args: "FILE",
		long: loadUsage, nargs: 1, argNames: "FILE", create: true,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&format, "format", "text", "text or binary")
			fs.IntVar(&group, "group", 1000, "records per Apply, 1 to 1048576")
			fs.Int64Var(&skip, "skip", 0, "skip the first N records of FILE (to resume an interrupted load)")
		},
		check: func(args []string, _ *storeFlags) error {
			if format != "text" && format != "binary" {
				return usagef("-format %q: want text or binary", format)
			}
			if group < 1 || group > 1<<20 {
				return usagef("-group %d: want 1 to 1048576", group)
			}
			if skip < 0 {
				return usagef("-skip %d: want 0 or more records", skip)
			}
			if p := args[0]; p != "-" {
				st, err := os.Stat(p)
				if err != nil {
					return usagef("%s: %v", p, pathErr(err))
				}
				if st.IsDir() {
					return usagef("%s is a directory; give a file", p)
				}
				f, err := os.Open(p)
				if err != nil {
					return usagef("%s: %v", p, pathErr(err))
				}
				f.Close()
			}
			return nil
		},
		do: func(ctx context.Context, s store, args []string, stdout io.Writer) error {
			l := &loader{s: s, sf: sf, binary: format == "binary", group: group, skip: skip}
			in := io.Reader(os.Stdin)
			if p := args[0]; p != "-" {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
				if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
					l.total = st.Size()
				}
			}
			l.bar = sf.progress.NewBar(sf.stderr)
			l.bar.Start("load", l.total)
			start := time.Now()
			err := l.load(ctx, &countReader{r: in, n: &l.read})
			l.bar.Stop()
			switch {
			case err == nil:
				d := time.Since(start)
				_, err = fmt.Fprintf(stdout, "loaded %d records (%s of keys and values) in %v: %.0f records/s\n",
					l.n, human(l.bytes), d.Round(time.Millisecond), float64(l.n)/d.Seconds())
			case ctx.Err() != nil:
				fmt.Fprintf(sf.stderr, "pmkv load: %s records stored (durable); rerun with -skip %d to resume\n", commas(l.skip+l.n), l.skip+l.n)
			}
			return err
		}}.command(sf)
}

// loader reads records and applies them group by group.
type loader struct {
	s        store
	sf       *storeFlags
	binary   bool
	group    int
	skip     int64 // records of the input passed over first (-skip)
	n, bytes int64 // records applied (durable) and their key and value bytes
	read     int64 // input bytes read
	total    int64 // input bytes, if known (for the bar)
	bar      *cli.Bar
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// commas prints n with thousands separators (953,000).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// load applies the records of in after the first l.skip. On a bad record
// or a cancelled ctx, what was read before it is applied first.
func (l *loader) load(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<20)
	next := textRecord
	if l.binary {
		next = binaryRecord
	}
	var ops []op
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if err := l.s.apply(ops); err != nil {
			return fmt.Errorf("records %d to %d: %w", l.skip+l.n+1, l.skip+l.n+int64(len(ops)), err)
		}
		for _, o := range ops {
			l.bytes += int64(len(o.key) + len(o.value))
		}
		l.n += int64(len(ops))
		ops = ops[:0]
		l.bar.Set(l.read, max(l.total, l.read))
		return nil
	}
	var pos recordPos
	for seen := int64(0); ; seen++ {
		if ctx.Err() != nil {
			if err := flush(); err != nil {
				return err
			}
			return ctx.Err()
		}
		k, v, rerr := next(r, &pos, l.sf)
		if rerr == io.EOF {
			return flush()
		}
		if rerr != nil {
			if err := flush(); err != nil {
				return err
			}
			return fmt.Errorf("%s: %w (the %d records before it are loaded)", pos, rerr, l.skip+l.n)
		}
		if seen < l.skip {
			continue
		}
		ops = append(ops, op{key: k, value: v})
		if len(ops) == l.group {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// recordPos is where a record starts: its line (text) or offset (binary).
type recordPos struct {
	line, off int64
	binary    bool
}

func (p recordPos) String() string {
	if p.binary {
		return "record at byte " + strconv.FormatInt(p.off, 10)
	}
	return "line " + strconv.FormatInt(p.line, 10)
}

var errRecord = errors.New("malformed record")

func textRecord(r *bufio.Reader, pos *recordPos, sf *storeFlags) ([]byte, []byte, error) {
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil, nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, nil, err
		}
		pos.line++
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			continue
		}
		ks, vs, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, nil, fmt.Errorf("%w: no tab between key and value (want KEY<tab>VALUE)", errRecord)
		}
		k, err := unquote(ks)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: key %s", errRecord, err)
		}
		v, err := unquote(vs)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: value %s", errRecord, err)
		}
		return k, v, limits(k, v, sf)
	}
}

func unquote(s string) ([]byte, error) {
	if !strings.HasPrefix(s, `"`) {
		return []byte(s), nil
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return nil, fmt.Errorf("%.40q is not a valid Go-quoted string", s)
	}
	return []byte(u), nil
}

func limits(k, v []byte, sf *storeFlags) error {
	switch {
	case len(k) == 0:
		return fmt.Errorf("%w: empty key", errRecord)
	case len(k) > sf.maxKey:
		return fmt.Errorf("key of %d bytes is over the limit of %d (-maxkey)", len(k), sf.maxKey)
	case len(v) > sf.maxValue:
		return fmt.Errorf("value of %d bytes is over the limit of %d (%s)", len(v), sf.maxValue, sf.valueLimit)
	}
	return nil
}

func binaryRecord(r *bufio.Reader, pos *recordPos, sf *storeFlags) ([]byte, []byte, error) {
	pos.binary = true
	part := func(what string, limit int, flag string) ([]byte, error) {
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, err
		}
		n := binary.LittleEndian.Uint32(l[:])
		if int64(n) > int64(limit) {
			return nil, fmt.Errorf("%s of %d bytes is over the limit of %d (%s)", what, n, limit, flag)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("%w: %s cut short (%d bytes announced)", errRecord, what, n)
		}
		return b, nil
	}
	k, err := part("key", sf.maxKey, "-maxkey")
	if err == io.EOF {
		return nil, nil, io.EOF
	}
	if err == io.ErrUnexpectedEOF {
		return nil, nil, fmt.Errorf("%w: key length cut short", errRecord)
	}
	if err != nil {
		return nil, nil, err
	}
	v, err := part("value", sf.maxValue, sf.valueLimit)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, fmt.Errorf("%w: value length missing", errRecord)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := limits(k, v, sf); err != nil {
		return nil, nil, err
	}
	pos.off += int64(8 + len(k) + len(v))
	return k, v, nil
}
