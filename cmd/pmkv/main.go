// Command pmkv is braid's key-value command over package kv: single
// operations, loading, the store's reports and maintenance, the YCSB
// benchmark (internal/ycsb) and a Redis-protocol server.
//
//	pmkv put|get|del KEY [VALUE]      pmkv scan FROM TO      pmkv load FILE
//	pmkv stats|check|recover|gc|checkpoint
//	pmkv bench [-workloads a,b,c,d,e,f] [-records N] [-ops N] [-sweep clients=1,2,4]
//	pmkv serve [-addr 127.0.0.1:6380]
//
// Every command names its store with -dir DIR (devices DIR/dev0..N-1,
// checkpoints in DIR/ckpt) or -devices D1,D2 -checkpoint C. The store
// flags are cobra's persistent flags, listed once by pmkv -h; each
// command's own flags are cobra flags too, taking one dash or two, before
// or after the arguments. The exit statuses are stated once, in exits
// (pmkv -h prints them).
package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/braid-pm/braid/internal/cli"
)

// exits is what pmkv's exit statuses mean (internal/cli's rule), printed
// by pmkv -h.
var exits = cli.Exits{
	Help: "-h and help",
	Fail: "the store cannot be opened (another kind of file, damaged, held by " +
		"another process), an operation failed (full, a value over the store's limit " +
		"in a load file, I/O, not enough free space to create or grow the store), " +
		"get found no such key, check found a bad entry (named), bench's -verify " +
		"found a read that was not correct, a load file line is malformed (its number " +
		"is named)",
	Usage: "found before the store is opened: an unknown command or flag, a bad flag " +
		"value (the message names the flag and what it accepts), a missing or extra " +
		"argument, a key or value over the limits, a -dir or device that is not a " +
		"directory, a store that does not exist for a command that needs one, a load " +
		"FILE that cannot be read",
	Internal: "the store was closed first",
	Hangup:   "as 130 (serve: its shutdown, then 129)",
	Signal: "the operation in flight finished or was abandoned, the store was " +
		"closed; every operation acknowledged before is durable (load says how many " +
		"records and how to resume); serve shuts down and exits 0",
	Pipe: ": as 130",
}

func main() {
	ctx, stop := cli.SignalContext(true)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usagef is a wrong command line (exit status 2).
func usagef(format string, a ...any) error { return cli.Usagef(format, a...) }

// commands are pmkv's, their flags bound to variables of this run, the
// store flags to sf.
func commands(sf *storeFlags) []cli.Command {
	return []cli.Command{
		putCommand(sf), getCommand(sf), delCommand(sf), scanCommand(sf), loadCommand(sf),
		statsCommand(sf), checkCommand(sf), recoverCommand(sf), gcCommand(sf), checkpointCommand(sf),
		benchCommand(sf), serveCommand(sf),
	}
}

// run is pmkv without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var sf storeFlags
	app := &cli.App{
		Name:       "pmkv",
		Short:      "braid's key-value store: operations, YCSB bench, Redis-protocol server",
		Long:       "pmkv: braid's SKYE-style key-value store (package kv) from the command line (see cmd/pmkv/README.md).",
		Commands:   commands(&sf),
		Flags:      sf.register,
		FlagsTitle: "Store flags (every command)",
		Exits:      exits,
		Message:    func(err error) string { return kvFlags.Replace(strings.TrimPrefix(err.Error(), "kv: ")) },
	}
	return app.Run(ctx, args, stdout, stderr)
}

// byteSize is a size flag (cli.Size: 4096, 64K, 64KiB, 512MiB, 2GiB).
type byteSize = cli.Size

func human(n int64) string { return cli.HumanBytes(n) }
