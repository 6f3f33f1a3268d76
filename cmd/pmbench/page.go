package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

func init() {
	register(mode{
		name: "page",
		summary: "failure-atomic 4 and 16 KiB page writes (pagelog): copy-on-write with the packed and the two-word header, " +
			"micro log, checksum + backup, against an unsafe in-place copy; pages/s",
		run: runPage,
	})
}

// The page-propagation table of the pagelog README (van Renen et al.,
// "Building blocks for persistent memory", §3.2), one thread,
// random page ids. The variants share the file (one store each, side by
// side) and run interleaved in batches of pageBatch writes; each variant's
// figure is the median over its batches, so that noisy neighbours and
// drifts hit all variants alike and the ratios hold.
const (
	pageBatch    = 16
	pageMaxPages = 1 << 16 // per store: 256 MiB of 4 KiB pages at most
)

var pageSizes = []int{4096, 16384}

type pageVariant struct {
	name  string
	opts  pagelog.Options
	dirty int  // WriteLines with this many dirty lines (micro log)
	raw   bool // persist.Copy in place: not failure-atomic, the upper bound
}

var pageVariants = []pageVariant{
	{name: "inplace-unsafe", raw: true},
	{name: "cow", opts: pagelog.Options{Layout: pagelog.Packed}},
	{name: "cow-crc", opts: pagelog.Options{Layout: pagelog.Packed, PayloadCRC: true}},
	{name: "cow-fence", opts: pagelog.Options{Layout: pagelog.TwoWord, FenceOnly: true}},
	{name: "cow-2word", opts: pagelog.Options{Layout: pagelog.TwoWord}},
	{name: "microlog-4", opts: pagelog.Options{Layout: pagelog.Packed, MicroLogLines: 4}, dirty: 4},
	{name: "microlog-16", opts: pagelog.Options{Layout: pagelog.Packed, MicroLogLines: 16}, dirty: 16},
	{name: "checksum", opts: pagelog.Options{Layout: pagelog.Checksum}},
}

// pageWriter is one variant ready to write: a store in its share of the
// file, or the raw share.
type pageWriter struct {
	v     pageVariant
	s     *pagelog.Store
	r     *persist.Region
	raw   []byte // the raw variant's share of the file
	pages uint64
	mask  pagelog.Lines
	x     uint64
}

func (w *pageWriter) write(page []byte) error {
	w.x ^= w.x << 13
	w.x ^= w.x >> 7
	w.x ^= w.x << 17
	pid := w.x % w.pages
	page[0] = byte(w.x)
	switch {
	case w.s == nil:
		n := uint64(len(page))
		return w.r.Copy(w.raw[pid*n:(pid+1)*n], page, 0)
	case w.v.dirty > 0:
		return w.s.WriteLines(pid, page, w.mask)
	}
	return w.s.Write(pid, page)
}

// pageWriters carves the file into one share per variant.
func pageWriters(b *bench, ps int) ([]*pageWriter, error) {
	share := (len(b.mem) / len(pageVariants)) &^ 4095
	var ws []*pageWriter
	for k, v := range pageVariants {
		w := &pageWriter{v: v, r: b.r, x: 88172645463325252 + uint64(k)}
		off := k * share
		if v.raw {
			w.raw = b.mem[off : off+share]
			w.pages = uint64(min(share/ps, pageMaxPages))
			ws = append(ws, w)
			continue
		}
		o := v.opts
		o.PageSize, o.Offset = ps, off
		n := min(share/(ps+64), pageMaxPages)
		for ; n > 0; n /= 2 {
			o.Pages = n
			if size, err := pagelog.Size(&o); err == nil && size <= share {
				break
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("the file (%s) is too small for %d page stores of %s pages", byteString(int64(len(b.mem))), len(pageVariants), byteString(int64(ps)))
		}
		s, err := pagelog.Create(b.r, &o)
		if err != nil {
			return nil, err
		}
		w.s, w.pages = s, uint64(s.Pages())
		if v.dirty > 0 {
			w.mask = pagelog.NewLines(ps)
			for i := range v.dirty {
				w.mask.Set(i * (ps / 64) / v.dirty)
			}
		}
		ws = append(ws, w)
	}
	return ws, nil
}

func runPage(b *bench) error {
	b.addSteps(len(pageSizes))
	tab := &table{
		title:  fmt.Sprintf("page writes (pagelog), 1 thread, random pages, each durable on return (median of batches of %d, variants interleaved)", pageBatch),
		header: []string{"page", "variant", "pages/s", "GB/s", "ns/op", "vs cow"},
		left:   2,
	}
	tab.notes = append(tab.notes,
		"cow: packed 1-word header (default), 2 barriers; cow-crc: the same with a CRC32C of every page (PayloadCRC); cow-fence: paper's 2-word header, fence only between pid and pvn (needs line-atomic write-back); cow-2word: flush+fence between them, 3 barriers",
		"microlog-N: WriteLines with N dirty lines through the micro log (a walog entry, 1 barrier; the lines in place are streamed); checksum: backup copy + in-place write with CRC32C, 2 barriers, page written twice; inplace-unsafe: one persist.Copy, not failure-atomic",
		b.r.Info().String())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, ps := range pageSizes {
		b.prog.step(fmt.Sprintf("page writes %s", byteString(int64(ps))))
		ws, err := pageWriters(b, ps)
		if err != nil {
			return err
		}
		page := make([]byte, ps)
		ns := make([][]float64, len(ws))
		for t0 := time.Now(); time.Since(t0) < b.cfg.duration*time.Duration(len(ws)) || len(ns[0]) < 3; {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			for k, w := range ws {
				s := time.Now()
				for range pageBatch {
					if err := w.write(page); err != nil {
						return fmt.Errorf("%s: %w", w.v.name, err)
					}
				}
				ns[k] = append(ns[k], float64(time.Since(s).Nanoseconds())/pageBatch)
			}
		}
		med := make([]float64, len(ws))
		cow := 0.0
		for k := range ws {
			med[k] = median(ns[k])
			if ws[k].v.name == "cow" {
				cow = med[k]
			}
		}
		for k, w := range ws {
			b.add(result{Point: device.Point{Op: "page-write-" + w.v.name, Pattern: rand.String(), Size: ps, Threads: 1,
				GBs: float64(ps) / med[k], NsPerOp: med[k]}})
			tab.row(byteString(int64(ps)), w.v.name, rate(med[k]), fmt.Sprintf("%.2f", float64(ps)/med[k]), nanos(med[k]), fmt.Sprintf("%.2f", cow/med[k]))
			if w.s != nil {
				if err := w.s.Close(); err != nil {
					return err
				}
			}
		}
	}
	b.section(tab)
	return runPageCrossover(b)
}

// pageDirty are the dirty-line counts of the micro-log crossover table.
var pageDirty = []int{1, 2, 4, 8, 16, 32}

// runPageCrossover compares WriteLines through the micro log with
// WriteLines through copy-on-write (the same dirty lines, spread over the
// page), interleaved: where the micro log stops paying is
// pagelog.DefaultMicroLogLines.
func runPageCrossover(b *bench) error {
	b.addSteps(len(pageSizes))
	tab := &table{
		title:  fmt.Sprintf("micro log vs copy-on-write for d dirty lines (WriteLines, 1 thread, random pages, ns per write, median of batches of %d)", pageBatch),
		header: []string{"page", "dirty", "cow", "microlog", "microlog/cow", "default"},
		left:   1,
	}
	share := (len(b.mem) / 2) &^ 4095
	for _, ps := range pageSizes {
		b.prog.step(fmt.Sprintf("micro log crossover %s", byteString(int64(ps))))
		var ws [2]*pageWriter
		for k, ml := range []int{-1, ps / 64} {
			o := pagelog.Options{PageSize: ps, Offset: k * share, MicroLogLines: ml, Pages: min(share/(ps+64), pageMaxPages)}
			for ; o.Pages > 0; o.Pages /= 2 {
				if size, err := pagelog.Size(&o); err == nil && size <= share {
					break
				}
			}
			s, err := pagelog.Create(b.r, &o)
			if err != nil {
				return err
			}
			defer s.Close() // on an error; closed below otherwise
			ws[k] = &pageWriter{v: pageVariant{dirty: 1}, s: s, r: b.r, pages: uint64(s.Pages()), x: 88172645463325252 + uint64(k)}
		}
		page := make([]byte, ps)
		for _, d := range pageDirty {
			mask := pagelog.NewLines(ps)
			for i := range d {
				mask.Set(i * (ps / 64) / d)
			}
			ns := [2][]float64{}
			for t0 := time.Now(); time.Since(t0) < b.cfg.duration || len(ns[0]) < 3; {
				if err := b.ctx.Err(); err != nil {
					return err
				}
				for k, w := range ws {
					w.mask = mask
					s := time.Now()
					for range pageBatch {
						if err := w.write(page); err != nil {
							return err
						}
					}
					ns[k] = append(ns[k], float64(time.Since(s).Nanoseconds())/pageBatch)
				}
			}
			c, m := median(ns[0]), median(ns[1])
			def := "cow"
			if d <= pagelog.DefaultMicroLogLines(ps) {
				def = "microlog"
			}
			tab.row(byteString(int64(ps)), fmt.Sprint(d), nanos(c), nanos(m), fmt.Sprintf("%.2f", m/c), def)
		}
		// The next page size creates its stores on the same bytes.
		for _, w := range ws {
			if err := w.s.Close(); err != nil {
				return err
			}
		}
	}
	b.section(tab)
	return nil
}
