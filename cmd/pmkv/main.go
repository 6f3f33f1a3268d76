// Command pmkv is braid's key-value command over package kv: single
// operations, loading, the store's reports and maintenance, the YCSB
// benchmark (internal/ycsb) and a Redis-protocol server.
//
//	pmkv put|get|del KEY [VALUE]      pmkv scan FROM TO      pmkv load FILE
//	pmkv stats|check|recover|gc|checkpoint
//	pmkv bench [-workloads load,a,b,c,d,f] [-records N] [-ops N] [-sweep clients=1,2,4]
//	pmkv serve [-addr 127.0.0.1:6380]
//
// Every command names its store with -dir DIR (devices DIR/dev0..N-1,
// checkpoints in DIR/ckpt) or -devices D1,D2 -checkpoint C. Subcommands
// are cobra commands that parse their own Go-style flags (single dash), as
// pmsort's do. The exit statuses are stated once, in exitStatuses (pmkv
// -h prints them).
package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/braid-pm/braid/internal/cli"
)

// exitStatuses is the one statement of the rule (internal/cli's), printed
// by pmkv -h.
const exitStatuses = `Exit status:
  0    success (also -h and help)
  1    the work failed: the store cannot be opened (another kind of
       file, damaged, held by another process), an operation failed
       (full, a value over the store's limit in a load file, I/O), get
       found no such key, check found a bad entry (named), bench's
       -verify found a read that was not correct, a load file line is
       malformed (its number is named)
  2    the command line is wrong, found before the store is opened: an
       unknown command or flag, a bad flag value, a missing or extra
       argument, a key or value over the limits, a -dir or device that
       is not a directory, a store that does not exist for a command
       that needs one, a load FILE that cannot be read
  129  the terminal went away (SIGHUP): as 130
  130  interrupted (SIGINT, SIGTERM): the operation in flight finished or
       was abandoned, the store was closed (a checkpoint written); every
       operation acknowledged before is durable
  141  the reader of the output went away (SIGPIPE): as 130, quietly`

func main() {
	ctx, stop := cli.SignalContext(true)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usagef is a wrong command line (exit status 2).
func usagef(format string, a ...any) error { return cli.Usagef(format, a...) }

var commands = []cli.Command{
	{Name: "put", Short: "store KEY = VALUE (VALUE - reads standard input)", Run: runPut},
	{Name: "get", Short: "print the value of KEY", Run: runGet},
	{Name: "del", Short: "delete KEY", Run: runDel},
	{Name: "scan", Short: "print the keys in [FROM, TO) with their values", Run: runScan},
	{Name: "load", Short: "store the key/value lines (or binary records) of FILE", Run: runLoad},
	{Name: "stats", Short: "keys, live and allocated bytes, space amplification, segments, DRAM per key", Run: runStats},
	{Name: "check", Short: "verify every checksum and the index against the logs", Run: runCheck},
	{Name: "recover", Short: "open the store and print what recovery found", Run: runRecover},
	{Name: "gc", Short: "run one cleaning pass", Run: runGC},
	{Name: "checkpoint", Short: "write a checkpoint of the index", Run: runCheckpoint},
	{Name: "bench", Short: "YCSB core workloads on kv", Run: runBench},
	{Name: "serve", Short: "serve the store over the Redis protocol", Run: runServe},
}

// run is pmkv without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:         "pmkv",
		Short:        "braid's key-value store: operations, YCSB bench, Redis-protocol server",
		Long:         "pmkv: braid's SKYE-style key-value store (package kv) from the command line (see cmd/pmkv/README.md).",
		Commands:     commands,
		ExitStatuses: exitStatuses,
	}
	return app.Run(ctx, args, stdout, stderr)
}

func newFlags(name, usage string, w io.Writer) *flag.FlagSet {
	return cli.NewFlags("pmkv "+name, usage, w)
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

// nargs checks the number of positional arguments.
func nargs(fs *flag.FlagSet, want int, names string) error { return cli.NArgs(fs, want, names) }

// byteSize is a size flag (cli.Size: 4096, 64K, 64KiB, 512MiB, 2GiB).
type byteSize = cli.Size

func human(n int64) string { return cli.HumanBytes(n) }
