package ycsb

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Header is the first line of the human table WriteLines prints.
const Header = "engine\tworkload\top\tclients\tcount\tops/s\tmean µs\tp50 µs\tp99 µs\tp999 µs\tmax µs\tdurability\tdevice"

// Table writes results as a table: one line per (workload, operation
// type), each naming the engine, its durability mode and device.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table on w and prints its header.
func NewTable(w io.Writer) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)}
	fmt.Fprintln(t.tw, Header+"\t")
	return t
}

// Add writes res's lines.
func (t *Table) Add(info Info, res *Result) {
	for _, o := range res.Ops {
		fmt.Fprintf(t.tw, "%s\t%s\t%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t\n",
			info.Engine, res.Workload, o.Op, res.Clients, o.Count, o.OpsPerSec,
			o.MeanUs, o.P50Us, o.P99Us, o.P999Us, o.MaxUs, info.Durability, info.Device)
	}
}

// Flush prints what was added.
func (t *Table) Flush() error { return t.tw.Flush() }
