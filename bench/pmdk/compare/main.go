// Command compare prints the output of the bench/pmdk benchmarks (go test
// -bench, any -count) as two tables: braid against libpmem for every
// benchmark that has both sides (BenchmarkX/{braid,libpmem}/...), and the
// PMDK reference figures. Each figure is the median of the runs, with the
// largest distance from it to another run in percent.
//
// Usage:
//
//	go test -tags pmdk -run '^$' -bench . -count 5 ./bench/pmdk/ > out.txt
//	go run ./bench/pmdk/compare out.txt
//
// With no file it reads standard input. Exit status 1 when no benchmark
// line was found, 2 for bad usage.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: compare [file ...]  (go test -bench output; standard input when no file)")
		os.Exit(2)
	}
	var in []io.Reader
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, os.Stdin)
	}
	res, err := parse(io.MultiReader(in...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
	if len(res.order) == 0 {
		fmt.Fprintln(os.Stderr, "compare: no benchmark results in the input")
		os.Exit(1)
	}
	write(os.Stdout, res)
}

// runs are the measurements of one benchmark, in input order.
type runs struct {
	ns, mbs []float64
}

type results struct {
	config []string         // "key: value" lines (goos, cpu, braid-region, ...)
	order  []string         // benchmark names, first appearance first
	byName map[string]*runs // name without the -GOMAXPROCS suffix
}

var (
	benchLine  = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([0-9.e+]+) ns/op(?:\s+([0-9.e+]+) MB/s)?`)
	configLine = regexp.MustCompile(`^([a-z][a-z0-9-]*): (.+)$`)
)

func parse(r io.Reader) (*results, error) {
	res := &results{byName: map[string]*runs{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := configLine.FindStringSubmatch(line); m != nil && m[1] != "ok" {
			if !seen[line] {
				seen[line] = true
				res.config = append(res.config, line)
			}
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := strings.TrimPrefix(m[1], "Benchmark")
		ns, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", line, err)
		}
		rs := res.byName[name]
		if rs == nil {
			rs = &runs{}
			res.byName[name] = rs
			res.order = append(res.order, name)
		}
		rs.ns = append(rs.ns, ns)
		if m[3] != "" {
			mbs, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", line, err)
			}
			rs.mbs = append(rs.mbs, mbs)
		}
	}
	return res, sc.Err()
}

// side splits "CopyPersist/braid/64" into ("CopyPersist/64", "braid").
func side(name string) (key, which string) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if p == "braid" || p == "libpmem" {
			return strings.Join(slices.Delete(slices.Clone(parts), i, i+1), "/"), p
		}
	}
	return name, ""
}

// median and spread: the median and the largest distance from it to a
// run, in percent of the median.
func median(xs []float64) (med, spread float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		med = s[len(s)/2]
	} else {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if med > 0 {
		spread = 100 * max(s[len(s)-1]-med, med-s[0]) / med
	}
	return med, spread
}

func write(w io.Writer, res *results) {
	for _, c := range res.config {
		fmt.Fprintln(w, c)
	}
	fmt.Fprintln(w)

	type pair struct{ braid, pmem *runs }
	var keys []string
	pairs := map[string]*pair{}
	var single []string
	for _, name := range res.order {
		key, which := side(name)
		if which == "" {
			single = append(single, name)
			continue
		}
		p := pairs[key]
		if p == nil {
			p = &pair{}
			pairs[key] = p
			keys = append(keys, key)
		}
		if which == "braid" {
			p.braid = res.byName[name]
		} else {
			p.pmem = res.byName[name]
		}
	}

	if len(keys) > 0 {
		t := table{header: []string{"benchmark", "braid ns/op", "libpmem ns/op", "braid MB/s", "libpmem MB/s", "braid speed", "runs"}}
		for _, k := range keys {
			p := pairs[k]
			row := []string{k, nsCell(p.braid), nsCell(p.pmem), mbCell(p.braid), mbCell(p.pmem), "-", runCount(p.braid) + "/" + runCount(p.pmem)}
			if p.braid != nil && p.pmem != nil {
				b, _ := median(p.braid.ns)
				l, _ := median(p.pmem.ns)
				if b > 0 {
					row[5] = fmt.Sprintf("%.2fx", l/b)
				}
			}
			t.rows = append(t.rows, row)
		}
		fmt.Fprintln(w, "braid vs libpmem: medians (± largest deviation of a run); braid speed = libpmem ns/op / braid ns/op, above 1 braid is faster")
		t.write(w)
		fmt.Fprintln(w)
	}
	if len(single) > 0 {
		t := table{header: []string{"benchmark", "ns/op", "MB/s", "runs"}}
		for _, name := range single {
			r := res.byName[name]
			t.rows = append(t.rows, []string{name, nsCell(r), mbCell(r), runCount(r)})
		}
		fmt.Fprintln(w, "PMDK and other figures: medians (± largest deviation of a run)")
		t.write(w)
	}
}

func runCount(r *runs) string {
	if r == nil {
		return "0"
	}
	return strconv.Itoa(len(r.ns))
}

func nsCell(r *runs) string {
	if r == nil || len(r.ns) == 0 {
		return "-"
	}
	m, s := median(r.ns)
	return fmt.Sprintf("%s ±%.0f%%", num(m), s)
}

func mbCell(r *runs) string {
	if r == nil || len(r.mbs) == 0 {
		return "-"
	}
	m, s := median(r.mbs)
	return fmt.Sprintf("%s ±%.0f%%", num(m), s)
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// table prints left-aligned names and right-aligned figures.
type table struct {
	header []string
	rows   [][]string
}

func (t table) write(w io.Writer) {
	all := append([][]string{t.header}, t.rows...)
	width := make([]int, len(t.header))
	for _, r := range all {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range all {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
