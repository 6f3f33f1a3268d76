package main

import (
	"flag"

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
