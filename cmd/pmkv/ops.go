package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/braid-pm/braid/kv"
)

// storeCommand is the frame of the commands that open a store, do one
// thing and close it: flags, the store's, argument count, open, fn, close
// (a checkpoint). A failure to close is the command's failure.
type storeCommand struct {
	name, usage string
	args        int    // positional arguments
	argNames    string // for the missing/extra message
	create      bool   // may create the store
	extra       func(fs *flag.FlagSet)
	check       func(fs *flag.FlagSet, sf *storeFlags) error // more argument checks, before opening
	do          func(ctx context.Context, s store, fs *flag.FlagSet, stdout io.Writer) error
}

func (c storeCommand) run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags(c.name, c.usage, stderr)
	var sf storeFlags
	sf.register(fs)
	if c.extra != nil {
		c.extra(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := nargs(fs, c.args, c.argNames); err != nil {
		return err
	}
	if err := sf.limits(); err != nil {
		return err
	}
	if c.check != nil {
		if err := c.check(fs, &sf); err != nil {
			return err
		}
	}
	o, err := sf.options(c.create)
	if err != nil {
		return err
	}
	s, err := openStore(o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close (checkpoint): %w", cerr)
		}
	}()
	return c.do(ctx, s, fs, stdout)
}

// checkKV refuses, before any work, keys and values over the limits.
func checkKV(sf *storeFlags, key []byte, value []byte) error {
	switch {
	case len(key) == 0:
		return usagef("empty key: keys are 1 to %d bytes", sf.maxKey)
	case len(key) > sf.maxKey:
		return usagef("key of %d bytes is over the limit of %d (-maxkey)", len(key), sf.maxKey)
	case len(value) > sf.maxValue:
		return usagef("value of %d bytes is over the limit of %d (-maxvalue)", len(value), sf.maxValue)
	}
	return nil
}

func runPut(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var value []byte
	return storeCommand{name: "put", usage: "[store flags] KEY VALUE  (VALUE - : standard input)\n\nStores KEY = VALUE; it is durable when pmkv put exits 0.",
		args: 2, argNames: "KEY and VALUE", create: true,
		check: func(fs *flag.FlagSet, sf *storeFlags) error {
			value = []byte(fs.Arg(1))
			if fs.Arg(1) == "-" {
				b, err := io.ReadAll(io.LimitReader(os.Stdin, int64(sf.maxValue)+1))
				if err != nil {
					return usagef("reading the value from standard input: %v", err)
				}
				value = b
			}
			return checkKV(sf, []byte(fs.Arg(0)), value)
		},
		do: func(_ context.Context, s store, fs *flag.FlagSet, _ io.Writer) error {
			return s.Put([]byte(fs.Arg(0)), value)
		}}.run(ctx, args, stdout, stderr)
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return storeCommand{name: "get", usage: "[store flags] KEY\n\nPrints the value of KEY (its bytes, then a newline); exit status 1 if there is none.",
		args: 1, argNames: "KEY",
		check: func(fs *flag.FlagSet, sf *storeFlags) error { return checkKV(sf, []byte(fs.Arg(0)), nil) },
		do: func(_ context.Context, s store, fs *flag.FlagSet, stdout io.Writer) error {
			v, err := s.Get([]byte(fs.Arg(0)))
			if errors.Is(err, kv.ErrNotFound) {
				return fmt.Errorf("key %s not found", strconv.Quote(fs.Arg(0)))
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", v)
			return err
		}}.run(ctx, args, stdout, stderr)
}

func runDel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return storeCommand{name: "del", usage: "[store flags] KEY\n\nDeletes KEY (a durable tombstone when pmkv del exits 0; an absent key is no error).",
		args: 1, argNames: "KEY",
		check: func(fs *flag.FlagSet, sf *storeFlags) error { return checkKV(sf, []byte(fs.Arg(0)), nil) },
		do: func(_ context.Context, s store, fs *flag.FlagSet, _ io.Writer) error {
			return s.Delete([]byte(fs.Arg(0)))
		}}.run(ctx, args, stdout, stderr)
}

func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var limit int
	return storeCommand{name: "scan", usage: "[store flags] [-n LIMIT] FROM TO\n\nPrints the keys in [FROM, TO) in order, one 'KEY<tab>VALUE' line each (TO \"\": to the end).\nA key or value that is not printable text without tabs, or starts with '\"', is printed\nGo-quoted: the lines can be given back to pmkv load.",
		args: 2, argNames: "FROM and TO",
		extra: func(fs *flag.FlagSet) { fs.IntVar(&limit, "n", 0, "print at most this many keys (0: all)") },
		check: func(fs *flag.FlagSet, sf *storeFlags) error {
			if limit < 0 {
				return usagef("-n %d: want 0 (all) or more", limit)
			}
			if !sf.ordered {
				return usagef("scan needs the ordered index: drop -ordered=false")
			}
			return nil
		},
		do: func(ctx context.Context, s store, fs *flag.FlagSet, stdout io.Writer) error {
			var to []byte
			if fs.Arg(1) != "" {
				to = []byte(fs.Arg(1))
			}
			n := 0
			var werr error
			err := s.Scan([]byte(fs.Arg(0)), to, func(k, v []byte) bool {
				if _, werr = fmt.Fprintf(stdout, "%s\t%s\n", quote(k), quote(v)); werr != nil || ctx.Err() != nil {
					return false
				}
				n++
				return limit == 0 || n < limit
			})
			if err == nil {
				err = werr
			}
			if err == nil {
				err = ctx.Err()
			}
			return err
		}}.run(ctx, args, stdout, stderr)
}

// quote prints b as is when it is printable text without tab or newline
// and does not start with a quote; else Go-quoted (load's unquote reverses
// it).
func quote(b []byte) string {
	if len(b) == 0 || b[0] == '"' || !utf8.Valid(b) {
		return strconv.Quote(string(b))
	}
	for _, r := range string(b) {
		if !strconv.IsPrint(r) {
			return strconv.Quote(string(b))
		}
	}
	return string(b)
}

func jsonFlag(p *bool) func(fs *flag.FlagSet) {
	return func(fs *flag.FlagSet) { fs.BoolVar(p, "json", false, "print JSON") }
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	return storeCommand{name: "stats", usage: "[store flags] [-json]\n\nKeys, live and allocated bytes, space amplification, segments per device, DRAM per key, media counters.",
		extra: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ *flag.FlagSet, stdout io.Writer) error {
			st := s.Stats()
			if asJSON {
				return printJSON(stdout, st)
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "keys\t%d\n", st.Keys)
			fmt.Fprintf(tw, "tombstones\t%d\n", st.Tombstones)
			fmt.Fprintf(tw, "live bytes\t%d (%s)\n", st.LiveBytes, human(st.LiveBytes))
			fmt.Fprintf(tw, "allocated bytes\t%d (%s)\n", st.AllocatedBytes, human(st.AllocatedBytes))
			fmt.Fprintf(tw, "space amplification\t%.2f\n", st.SpaceAmplification)
			fmt.Fprintf(tw, "DRAM per key\t%.1f B\n", st.DRAMPerKey)
			fmt.Fprintf(tw, "workers\t%d\n", st.Workers)
			for _, d := range st.Devices {
				fmt.Fprintf(tw, "device %s\t%d segments: %d data, %d metadata, %d free; live %s of %s\n",
					d.Dir, d.Segments, d.Data, d.Metadata, d.Free, human(d.LiveBytes), human(d.AllocBytes))
			}
			fmt.Fprintf(tw, "media\t%d fences, %d bytes appended, %d bytes streamed\n", st.Fences, st.AppendedBytes, st.MediaBytes)
			return tw.Flush()
		}}.run(ctx, args, stdout, stderr)
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return storeCommand{name: "check", usage: "[store flags]\n\nVerifies every checksum of the logs and the index against them; exit status 1 names the first bad entry.",
		do: func(_ context.Context, s store, _ *flag.FlagSet, stdout io.Writer) error {
			if err := s.Check(); err != nil {
				return err
			}
			st := s.Stats()
			_, err := fmt.Fprintf(stdout, "ok: %d keys, every checksum holds, the index agrees with the logs\n", st.Keys)
			return err
		}}.run(ctx, args, stdout, stderr)
}

func runRecover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	return storeCommand{name: "recover", usage: "[store flags] [-json]\n\nOpens the store (recovering it) and prints what recovery found: the checkpoint used, bytes and\nentries replayed per device, torn or corrupt entries dropped, the time of each phase.",
		extra: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ *flag.FlagSet, stdout io.Writer) error {
			r := s.Recovery()
			if asJSON {
				return printJSON(stdout, r)
			}
			return printRecovery(stdout, r)
		}}.run(ctx, args, stdout, stderr)
}

func printRecovery(w io.Writer, r kv.RecoveryReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ck := r.Checkpoint
	if ck == "" {
		ck = "none"
	}
	if r.Created {
		ck += " (a new store)"
	}
	fmt.Fprintf(tw, "checkpoint\t%s, %d keys; %d newer ones failed their checks\n", ck, r.CheckpointKeys, r.SkippedCheckpts)
	fmt.Fprintf(tw, "replayed\t%d entries, %s of metadata, %s of values read\n", r.Entries, human(r.BytesScanned), human(r.ValueBytes))
	for _, d := range r.Devices {
		fmt.Fprintf(tw, "  %s\t%d entries, %s, %d torn tails\n", d.Dir, d.Entries, human(d.BytesScanned), d.Torn)
	}
	fmt.Fprintf(tw, "dropped\t%d torn tails (%d entries), %d corrupt values, %d stale entries\n", r.Torn, r.TornEntries, r.CorruptValues, r.Stale)
	if r.PoisonedSegments > 0 {
		fmt.Fprintf(tw, "poisoned\t%d segments with unreadable media (%d with their header), %d entries lost to it\n", r.PoisonedSegments, r.LostSegments, r.MediaLost)
	}
	fmt.Fprintf(tw, "keys\t%d (highest serial %d)\n", r.Keys, r.MaxSerial)
	fmt.Fprintf(tw, "time\tcheckpoint %v, read %v, parse %v, index %v; total %v (%.2f GB/s, %.0f keys/s)\n",
		r.CheckpointTime, r.ReadTime, r.ParseTime, r.IndexTime, r.Total, r.GBs, r.KeysPerSec)
	fmt.Fprintf(tw, "startup GC\t%d segments cleaned, %d entries moved, %d segments freed\n", r.GC.Cleaned, r.GC.Moved, r.GC.SegmentsFreed)
	return tw.Flush()
}

func runGC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	return storeCommand{name: "gc", usage: "[store flags] [-json]\n\nRuns one cleaning pass now and prints what it did.",
		extra: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ *flag.FlagSet, stdout io.Writer) error {
			r, err := s.GC()
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(stdout, r)
			}
			_, err = fmt.Fprintf(stdout, "gc: %d of %d candidate segments cleaned, %d entries (%s) moved, %d tombstones dropped, %d segments freed in %v\n",
				r.Cleaned, r.Candidates, r.Moved, human(r.MovedBytes), r.TombstonesDropped, r.SegmentsFreed, r.Elapsed)
			return err
		}}.run(ctx, args, stdout, stderr)
}

func runCheckpoint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return storeCommand{name: "checkpoint", usage: "[store flags]\n\nWrites a checkpoint of the index (recovery then replays only what follows it).",
		do: func(_ context.Context, s store, _ *flag.FlagSet, stdout io.Writer) error {
			if err := s.Checkpoint(); err != nil {
				return err
			}
			_, err := fmt.Fprintf(stdout, "checkpoint written: %d keys\n", s.Stats().Keys)
			return err
		}}.run(ctx, args, stdout, stderr)
}
