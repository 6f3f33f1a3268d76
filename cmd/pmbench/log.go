package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
	"github.com/braid-pm/braid/walog"
)

func init() {
	register(mode{
		name: "log",
		summary: "walog appends of 16 B to 4 KiB entries, each durable on return: " +
			"PopLog (1 barrier), RAWL (1, bit packing) and the classic log (2); appends/s",
		run: runLog,
	})
}

// The log comparison of van Renen et al., "Building blocks for persistent
// memory", §3.3.2, with the walog package, one thread.
// The three formats' logs lie side by side in the file; they run
// interleaved in batches of logBatch appends, and each format's rate is
// the median over its batches (as in the inplace mode), so the ratios hold
// on a busy machine. The file is dirtied before each size and the logs
// wrap when full: the figures are the steady state, zeroing ahead
// (PopLog, Classic) and pass flips (RAWL) included.
const logBatch = 32

var (
	logSizes   = []int{16, 64, 256, 1024, 4096}
	logFormats = []walog.Format{walog.PopLog, walog.RAWL, walog.Classic}
)

func runLog(b *bench) error {
	part := (len(b.mem) / len(logFormats)) &^ (1<<20 - 1)
	if part < 1<<20 {
		return fmt.Errorf("the file (%s) is too small for three logs of at least 1 MiB", byteString(int64(len(b.mem))))
	}
	b.addSteps(len(logSizes))
	tab := &table{
		title: fmt.Sprintf("log appends, 1 thread, 3 logs of %s (appends/s, median of batches of %d, formats interleaved)",
			byteString(int64(part)), logBatch),
		header: []string{"size", "poplog", "rawl", "classic", "poplog/classic", "rawl/classic", "ns poplog", "ns rawl", "ns classic", "MB/s poplog"},
		left:   1,
	}
	tab.notes = append(tab.notes,
		"each append is durable when it returns: PopLog = header+data+popcount, one persist; RAWL = a validity bit per word, one persist; classic = entry + persist, commit word + persist",
		"steady state: the file is dirtied first and the logs wrap, so PopLog and classic zero ahead of their tails; "+
			"medians leave out the rare batch that zeroes a chunk (1 MiB), means (go test -bench BenchmarkAppend ./walog) include it",
		b.r.Info().String())

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, size := range logSizes {
		b.prog.step(fmt.Sprintf("log %s", byteString(int64(size))))
		if err := b.r.Set(b.mem, 0xa5, persist.NonTemporal); err != nil {
			return err
		}
		logs := make([]*walog.Log, len(logFormats))
		for k, f := range logFormats {
			l, err := walog.Create(b.r, &walog.Options{Format: f, Offset: k * part, Size: part, MaxEntry: 4096, Wrap: true})
			if err != nil {
				return err
			}
			logs[k] = l
		}
		ns, err := logMeasure(b, logs, size)
		if err != nil {
			return err
		}
		for k, f := range logFormats {
			b.add(result{Point: device.Point{Op: "log-append-" + f.String(), Pattern: seq.String(), Size: size, Threads: 1,
				GBs: float64(size) / ns[k], NsPerOp: ns[k]}})
			if err := logs[k].Close(); err != nil {
				return err
			}
		}
		tab.row(byteString(int64(size)), rate(ns[0]), rate(ns[1]), rate(ns[2]),
			fmt.Sprintf("%.2f", ns[2]/ns[0]), fmt.Sprintf("%.2f", ns[2]/ns[1]),
			nanos(ns[0]), nanos(ns[1]), nanos(ns[2]), fmt.Sprintf("%.0f", float64(size)/ns[0]*1e3))
	}
	b.section(tab)
	return nil
}

// logMeasure appends to the logs interleaved in batches for -duration and
// returns each one's median ns per append.
func logMeasure(b *bench, logs []*walog.Log, size int) ([]float64, error) {
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(i*131 + 7)
	}
	ns := make([][]float64, len(logs))
	for t0 := time.Now(); time.Since(t0) < b.cfg.duration || len(ns[0]) < 3; {
		if err := b.ctx.Err(); err != nil {
			return nil, err
		}
		for k, l := range logs {
			s := time.Now()
			for i := range logBatch {
				p[0] = byte(i)
				if _, err := l.Append(p); err != nil {
					return nil, err
				}
			}
			ns[k] = append(ns[k], float64(time.Since(s).Nanoseconds())/logBatch)
		}
	}
	med := make([]float64, len(logs))
	for k := range ns {
		med[k] = median(ns[k])
	}
	return med, nil
}
