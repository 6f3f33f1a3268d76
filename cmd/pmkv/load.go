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
(text) or byte offset (binary) named; the records before it are loaded.`

func loadCommand(sf *storeFlags) cli.Command {
	var format string
	var group int
	return storeCommand{name: "load", short: "store the key/value lines (or binary records) of FILE", args: "FILE",
		long: loadUsage, nargs: 1, argNames: "FILE", create: true,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&format, "format", "text", "text or binary")
			fs.IntVar(&group, "group", 1000, "records per Apply, 1 to 1048576")
		},
		check: func(args []string, _ *storeFlags) error {
			if format != "text" && format != "binary" {
				return usagef("-format %q: want text or binary", format)
			}
			if group < 1 || group > 1<<20 {
				return usagef("-group %d: want 1 to 1048576", group)
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
			in := io.Reader(os.Stdin)
			if p := args[0]; p != "-" {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			start := time.Now()
			n, bytes, err := load(ctx, s, bufio.NewReaderSize(in, 1<<20), format == "binary", group, sf)
			if err == nil {
				d := time.Since(start)
				_, err = fmt.Fprintf(stdout, "loaded %d records (%s of keys and values) in %v: %.0f records/s\n",
					n, human(bytes), d.Round(time.Millisecond), float64(n)/d.Seconds())
			}
			return err
		}}.command(sf)
}

// load reads records and applies them group by group. On a bad record or
// a cancelled ctx, what was read before it is applied first.
func load(ctx context.Context, s store, r *bufio.Reader, binaryFormat bool, group int, sf *storeFlags) (n, bytes int64, err error) {
	next := textRecord
	if binaryFormat {
		next = binaryRecord
	}
	var ops []op
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if err := s.apply(ops); err != nil {
			return fmt.Errorf("records %d to %d: %w", n+1, n+int64(len(ops)), err)
		}
		for _, o := range ops {
			bytes += int64(len(o.key) + len(o.value))
		}
		n += int64(len(ops))
		ops = ops[:0]
		return nil
	}
	var pos recordPos
	for {
		if ctx.Err() != nil {
			if err := flush(); err != nil {
				return n, bytes, err
			}
			return n, bytes, ctx.Err()
		}
		k, v, rerr := next(r, &pos, sf)
		if rerr == io.EOF {
			return n, bytes, flush()
		}
		if rerr != nil {
			if err := flush(); err != nil {
				return n, bytes, err
			}
			return n, bytes, fmt.Errorf("%s: %w (the %d records before it are loaded)", pos, rerr, n)
		}
		ops = append(ops, op{key: k, value: v})
		if len(ops) == group {
			if err := flush(); err != nil {
				return n, bytes, err
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
