package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/sort"
)

// formatFlags are the record-format flags shared by every subcommand.
type formatFlags struct {
	key, value int
	klv        bool
}

func (f *formatFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.key, "key", 10, "key size in bytes")
	fs.IntVar(&f.value, "value", 90, "value size in bytes (fixed-size records)")
	fs.BoolVar(&f.klv, "klv", false, "Key-Length-Value records: key[key] | value_len uint32 LE | value")
}

// format returns the record format; a bad one is bad usage.
func (f *formatFlags) format() (sort.Format, error) {
	ft := sort.Format{KeySize: f.key, ValueSize: f.value, KLV: f.klv}
	if f.klv {
		ft.ValueSize = 0
	}
	if err := ft.Validate(); err != nil {
		return ft, badUsage(err)
	}
	return ft, nil
}

// formatHint adds to err, when it says a file's bytes are not records of
// f (sort.ErrBadFormat), the format flags the file was read with and the
// ones for the other kind of record: a KLV file read without -klv, or a
// fixed-size one read with it, fails on its first record or its size.
func formatHint(f sort.Format, err error) error {
	var usage cli.UsageError
	if err == nil || !errors.Is(err, sort.ErrBadFormat) || errors.As(err, &usage) {
		return err
	}
	if f.KLV {
		return fmt.Errorf("%w; read as KLV records with %d-byte keys (-klv -key %d): fixed-size records are read with -key K -value V, without -klv", err, f.KeySize, f.KeySize)
	}
	return fmt.Errorf("%w; read as fixed-size records of %d bytes (-key %d -value %d): KLV records are read with -klv -key K", err, f.RecordSize(), f.KeySize, f.ValueSize)
}
