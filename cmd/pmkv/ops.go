package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/kv"
)

// storeCommand is the frame of the commands that open a store, do one
// thing and close it: flags, argument count, open, fn, close (a
// checkpoint, unless read-only). A failure to close is the command's
// failure.
type storeCommand struct {
	name, short, long string
	args              string // the positional arguments, for the usage line
	nargs             int
	argNames          string // for the missing/extra message
	create            bool   // may create the store
	readOnly          bool   // opens it read-only: changes no file (kv.Options.ReadOnly)
	flags             func(fs *pflag.FlagSet)
	check             func(args []string, sf *storeFlags) error // more argument checks, before opening
	do                func(ctx context.Context, s store, args []string, stdout io.Writer) error
	// lookup, instead of do: point reads through a kv.Reader (read-only,
	// the checkpoint probed instead of loaded into an index).
	lookup func(g getter, args []string, stdout io.Writer) error
}

// command is c as a pmkv command with the store flags sf.
func (c storeCommand) command(sf *storeFlags) cli.Command {
	return cli.Command{Name: c.name, Short: c.short, Long: c.long, Args: c.args, Flags: c.flags,
		Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			sf.stderr = stderr
			return c.run(ctx, sf, args, stdout)
		}}
}

func (c storeCommand) run(ctx context.Context, sf *storeFlags, args []string, stdout io.Writer) (err error) {
	if err := cli.Args(args, c.nargs, c.argNames); err != nil {
		return err
	}
	if err := sf.limits(); err != nil {
		return err
	}
	if c.check != nil {
		if err := c.check(args, sf); err != nil {
			return err
		}
	}
	o, err := sf.options(c.create)
	if err != nil {
		return err
	}
	o.ReadOnly = c.readOnly
	if c.lookup != nil {
		return c.runLookup(o, args, stdout)
	}
	s, err := openStore(o)
	if err != nil {
		sf.unmake()
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			what := "close (checkpoint)"
			if c.readOnly {
				what = "close"
			}
			err = fmt.Errorf("%s: %w", what, cerr)
		}
	}()
	return c.do(ctx, s, args, stdout)
}

// runLookup is run for a lookup command.
func (c storeCommand) runLookup(o *kv.Options, args []string, stdout io.Writer) (err error) {
	g, err := openReader(o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := g.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	return c.lookup(g, args, stdout)
}

// checkKV refuses, before any work, keys and values over the limits.
func checkKV(sf *storeFlags, key []byte, value []byte) error {
	switch {
	case len(key) == 0:
		return usagef("empty key: keys are 1 to %d bytes", sf.maxKey)
	case len(key) > sf.maxKey:
		return usagef("key of %d bytes is over the limit of %d (-maxkey)", len(key), sf.maxKey)
	case len(value) > sf.maxValue:
		return usagef("value of %d bytes is over the limit of %d (%s)", len(value), sf.maxValue, sf.valueLimit)
	}
	return nil
}

func putCommand(sf *storeFlags) cli.Command {
	var value []byte
	return storeCommand{name: "put", short: "store KEY = VALUE (VALUE - reads standard input)", args: "KEY VALUE",
		long:  "Stores KEY = VALUE; it is durable when pmkv put exits 0. VALUE - reads the value from\nstandard input (pmkv put -- KEY -x stores the value -x).",
		nargs: 2, argNames: "KEY and VALUE", create: true,
		check: func(args []string, sf *storeFlags) error {
			value = []byte(args[1])
			if args[1] == "-" {
				b, err := io.ReadAll(io.LimitReader(os.Stdin, int64(sf.maxValue)+1))
				if err != nil {
					return usagef("reading the value from standard input: %v", err)
				}
				value = b
			}
			value = server.EncodeString(value) // as pmkv serve's SET stores it
			return checkKV(sf, []byte(args[0]), value)
		},
		do: func(_ context.Context, s store, args []string, _ io.Writer) error {
			return s.Put([]byte(args[0]), value)
		}}.command(sf)
}

func getCommand(sf *storeFlags) cli.Command {
	return storeCommand{name: "get", readOnly: true, short: "print the value of KEY", args: "KEY",
		long:  "Prints the value of KEY (its bytes, then a newline); exit status 1 if there is none.",
		nargs: 1, argNames: "KEY",
		check: func(args []string, sf *storeFlags) error { return checkKV(sf, []byte(args[0]), nil) },
		lookup: func(s getter, args []string, stdout io.Writer) error {
			v, err := s.Get([]byte(args[0]))
			if errors.Is(err, kv.ErrNotFound) {
				return fmt.Errorf("key %s not found", strconv.Quote(args[0]))
			}
			if err != nil {
				return err
			}
			str, ok := server.DecodeString(v)
			if !ok {
				return fmt.Errorf("key %s holds a %s (a pmkv serve data type), not a string: read it with a Redis client", strconv.Quote(args[0]), server.TypeName(v))
			}
			_, err = fmt.Fprintf(stdout, "%s\n", str)
			return err
		}}.command(sf)
}

func delCommand(sf *storeFlags) cli.Command {
	return storeCommand{name: "del", short: "delete KEY", args: "KEY",
		long:  "Deletes KEY (a durable tombstone when pmkv del exits 0; an absent key is no error).",
		nargs: 1, argNames: "KEY",
		check: func(args []string, sf *storeFlags) error { return checkKV(sf, []byte(args[0]), nil) },
		do: func(_ context.Context, s store, args []string, _ io.Writer) error {
			return s.Delete([]byte(args[0]))
		}}.command(sf)
}

func scanCommand(sf *storeFlags) cli.Command {
	var limit int
	return storeCommand{name: "scan", readOnly: true, short: "print the keys in [FROM, TO) with their values", args: "FROM TO",
		long: `Prints the keys in [FROM, TO) in order, one 'KEY<tab>VALUE' line each (TO "": to the end).
A key or value that is not printable text without tabs, or starts with '"', is printed
Go-quoted: the lines can be given back to pmkv load.`,
		nargs: 2, argNames: "FROM and TO",
		flags: func(fs *pflag.FlagSet) { fs.IntVar(&limit, "n", 0, "print at most this many keys (0: all)") },
		check: func(_ []string, sf *storeFlags) error {
			if limit < 0 {
				return usagef("-n %d: want 0 (all) or more", limit)
			}
			if !sf.ordered {
				return usagef("scan needs the ordered index: drop -ordered=false")
			}
			return nil
		},
		do: func(ctx context.Context, s store, args []string, stdout io.Writer) error {
			var to []byte
			if args[1] != "" {
				to = []byte(args[1])
			}
			n := 0
			var werr error
			err := s.Scan([]byte(args[0]), to, func(k, v []byte) bool {
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
		}}.command(sf)
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

func jsonFlag(p *bool) func(fs *pflag.FlagSet) {
	return func(fs *pflag.FlagSet) { fs.BoolVar(p, "json", false, "print JSON") }
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func statsCommand(sf *storeFlags) cli.Command {
	var asJSON bool
	return storeCommand{name: "stats", readOnly: true, short: "keys, live and allocated bytes, space amplification, segments, DRAM per key",
		long:  "Keys, live and allocated bytes, space amplification, segments per device, DRAM per key, media counters.",
		flags: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ []string, stdout io.Writer) error {
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
				fmt.Fprintf(tw, "device %s\t%d of at most %d segments: %d data, %d metadata, %d free; live %s of %s\n",
					d.Dir, d.Segments, d.Limit, d.Data, d.Metadata, d.Free, human(d.LiveBytes), human(d.AllocBytes))
			}
			fmt.Fprintf(tw, "media\t%d fences, %d bytes appended, %d bytes streamed\n", st.Fences, st.AppendedBytes, st.MediaBytes)
			fmt.Fprintf(tw, "growth\t%d segments added, %d log extensions by a writer, %d writes waited for a segment\n", st.SegmentsAdded, st.ExtendWaits, st.GrowWaits)
			printNUMA(tw, st.NUMA)
			return tw.Flush()
		}}.command(sf)
}

// printNUMA prints the store's NUMA placement: its mode, then a line per
// node that holds a device.
func printNUMA(w io.Writer, r kv.NUMAReport) {
	fmt.Fprintf(w, "numa\t%s\n", r.Mode)
	for _, n := range r.Nodes {
		if len(n.Devices) == 0 {
			continue
		}
		fmt.Fprintf(w, "node %d\tcpus %s; devices %v; workers %v on cpus %v; %d index shards (%d bound)\n",
			n.ID, numaList(n.CPUs), n.Devices, n.Workers, n.WorkerCPUs, n.Shards, n.ShardsBound)
	}
}

func numaList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func checkCommand(sf *storeFlags) cli.Command {
	return storeCommand{name: "check", readOnly: true, short: "verify every checksum and the index against the logs",
		long: "Verifies every checksum of the logs and the index against them; exit status 1 names the first bad entry.",
		do: func(_ context.Context, s store, _ []string, stdout io.Writer) error {
			if err := s.Check(); err != nil {
				return err
			}
			st := s.Stats()
			_, err := fmt.Fprintf(stdout, "ok: %d keys, every checksum holds, the index agrees with the logs\n", st.Keys)
			return err
		}}.command(sf)
}

func recoverCommand(sf *storeFlags) cli.Command {
	var asJSON bool
	return storeCommand{name: "recover", readOnly: true, short: "open the store and print what recovery found",
		long:  "Opens the store (recovering it) and prints what recovery found: the checkpoint used, bytes and\nentries replayed per device, torn or corrupt entries dropped, the time of each phase.",
		flags: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ []string, stdout io.Writer) error {
			r := s.Recovery()
			if asJSON {
				return printJSON(stdout, r)
			}
			return printRecovery(stdout, r)
		}}.command(sf)
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
	return tw.Flush()
}

func gcCommand(sf *storeFlags) cli.Command {
	var asJSON bool
	return storeCommand{name: "gc", short: "run one cleaning pass",
		long:  "Opens the store (its open runs the start-up cleaning pass), runs one more cleaning pass\nand prints what each did.",
		flags: jsonFlag(&asJSON),
		do: func(_ context.Context, s store, _ []string, stdout io.Writer) error {
			startup := s.Recovery().GC
			r, err := s.GC()
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(stdout, struct{ Startup, Pass kv.GCReport }{startup, r})
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			for _, p := range []struct {
				what string
				r    kv.GCReport
			}{{"start-up pass", startup}, {"gc pass", r}} {
				fmt.Fprintf(tw, "%s:\t%d of %d candidate segments cleaned, %d entries (%s) moved, %d tombstones dropped, %d segments freed in %v\n",
					p.what, p.r.Cleaned, p.r.Candidates, p.r.Moved, human(p.r.MovedBytes), p.r.TombstonesDropped, p.r.SegmentsFreed, p.r.Elapsed.Round(time.Microsecond))
			}
			return tw.Flush()
		}}.command(sf)
}

func checkpointCommand(sf *storeFlags) cli.Command {
	return storeCommand{name: "checkpoint", short: "write a checkpoint of the index",
		long: "Writes a checkpoint of the index (recovery then replays only what follows it).",
		do: func(_ context.Context, s store, _ []string, stdout io.Writer) error {
			if err := s.Checkpoint(); err != nil {
				return err
			}
			_, err := fmt.Fprintf(stdout, "checkpoint written: %d keys\n", s.Stats().Keys)
			return err
		}}.command(sf)
}
