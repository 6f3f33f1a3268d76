package device

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The shipped device profiles. Each says where its figures come from
// (Source); the points between the published figures are interpolated by
// hand to the shape the sources describe, and say so. The persist README
// has the table.
var shipped = map[string]func() *Profile{
	"dram":         dramProfile,
	"optane-1dimm": optane1Profile,
	"optane-6dimm": optane6Profile,
	"cxl-mssd":     cxlProfile,
}

// Names lists the shipped profiles' names, sorted.
func Names() []string {
	names := make([]string, 0, len(shipped))
	for n := range shipped {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Shipped returns a fresh copy of the shipped profile name
// (Names), or an ErrInvalid error naming the known ones.
func Shipped(name string) (*Profile, error) {
	f, ok := shipped[name]
	if !ok {
		return nil, fmt.Errorf("%w: no device profile %q: the shipped ones are %s, or give a profile file", ErrInvalid, name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// Open returns a new Device for spec: a shipped profile's name, or
// the path of a profile file (one with a '/' or ending in .json) that has a
// model; either followed by ":K" runs the device K times slower (Slowed).
// "dram" gives a device that charges nothing.
func Open(spec string, opts *Options) (*Device, error) {
	var p *Profile
	var err error
	if base, k, ok := strings.Cut(spec, ":"); ok {
		f, perr := strconv.ParseFloat(k, 64)
		if perr != nil || !(f >= 1) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: device %q: after the colon, how many times slower to run it (a number >= 1)", ErrInvalid, spec)
		}
		d, err := Open(base, nil)
		if err != nil {
			return nil, err
		}
		q := d.Profile()
		return New(q.Slowed(f), opts)
	}
	if strings.ContainsRune(spec, '/') || strings.HasSuffix(spec, ".json") {
		if p, err = LoadProfile(spec); err == nil && p.Model == nil {
			err = fmt.Errorf("%w: profile %s has no device model to emulate (format 2 with \"model\"; pmbench -device writes one)", ErrInvalid, spec)
		}
	} else {
		p, err = Shipped(spec)
	}
	if err != nil {
		return nil, err
	}
	return New(p, opts)
}

// Slowed returns a copy of p whose device is k times slower: bandwidths
// (curves and peaks) divided by k, latencies multiplied, named NAME:K. It
// keeps a device the limit on a host with less CPU than the machine the
// figures come from: a 2-core host under load copies at about the speed of
// one Optane DIMM, a 40-core one many times faster.
func (p *Profile) Slowed(k float64) *Profile {
	q := *p
	q.Device = fmt.Sprintf("%s:%g", p.Device, k)
	q.Source = fmt.Sprintf("%s — run %g times slower", p.Source, k)
	q.Points = nil
	for _, pk := range []*Peak{&q.SeqRead, &q.RandRead, &q.SeqWrite, &q.RandWrite} {
		pk.GBs /= k
	}
	q.PersistNs *= k
	if p.Model != nil {
		m := *p.Model
		for _, c := range []*[]Level{&m.SeqRead, &m.RandRead, &m.Write} {
			*c = slices.Clone(*c)
			for i := range *c {
				(*c)[i].GBs /= k
			}
		}
		m.ReadNs *= k
		m.WriteNs *= k
		q.Model = &m
	}
	return &q
}

// The devices BRAID_DEVICE names, one per spec for the whole process.
var (
	envDevMu sync.Mutex
	envDevs  = map[string]*Device{}
)

// FromEnv is the device BRAID_DEVICE names (a shipped profile's name or a
// profile file with a model, as Open takes), one for every caller in the
// process that names the same spec; nil when it is unset, empty or dram.
func FromEnv() (*Device, error) {
	spec := strings.TrimSpace(os.Getenv("BRAID_DEVICE"))
	if spec == "" || spec == "dram" {
		return nil, nil
	}
	envDevMu.Lock()
	defer envDevMu.Unlock()
	if d, ok := envDevs[spec]; ok {
		return d, nil
	}
	d, err := Open(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("BRAID_DEVICE=%s: %w", spec, err)
	}
	envDevs[spec] = d
	return d, nil
}

// withPeaks fills the summary fields (SeqRead, RandRead, SeqWrite) of a
// shipped profile from its model's curves, as pmbench summarizes its
// measurements (the knee: the fewest threads within 5% of the peak).
func withPeaks(p *Profile) *Profile {
	p.Format = ProfileFormat
	p.SeqRead = curvePeak(p.Model.SeqRead)
	p.RandRead = curvePeak(p.Model.RandRead)
	p.SeqWrite = curvePeak(p.Model.Write)
	return p
}

func curvePeak(c []Level) Peak {
	var pk Peak
	for _, l := range c {
		if l.GBs > pk.GBs {
			pk.GBs, pk.Threads = l.GBs, l.Threads
		}
	}
	pk.Knee = pk.Threads
	for _, l := range c {
		if l.GBs >= 0.95*pk.GBs && l.Threads < pk.Knee {
			pk.Knee = l.Threads
		}
	}
	return pk
}

func dramProfile() *Profile {
	return &Profile{Format: ProfileFormat, Device: "dram",
		Source: "no emulation: the host's memory as it is (regions run as without a device)"}
}

// optane1Profile: one Optane DC PMem DIMM (first generation, 256 GB class).
func optane1Profile() *Profile {
	return withPeaks(&Profile{Device: "optane-1dimm", Interference: 0.35, MovntThreshold: 256, PersistNs: 94,
		Source: "Izraelevitz et al., Basic Performance Measurements of the Intel Optane DC PMM (2019): " +
			"6.6 GB/s read, 2.3 GB/s write per DIMM, 305 ns random load; " +
			"Yang et al., An Empirical Guide to the Behavior and Use of Scalable Persistent Memory (FAST 2020): " +
			"256 B XPLine, 16 KiB XPBuffer, ~94 ns durable store, writes peak at a few threads and then fall; " +
			"SKYE (papers/002) §3 O1-O4 on one DIMM: 3.9 GB/s sequential and 2.1 GB/s random 512 B reads with one thread, " +
			"6.9 GB/s with 6 readers, 5.85 GB/s random with 6, 2.2 GB/s writes with 3 writers, mixed I/O 3.31 GB/s with 2 readers + 1 writer. " +
			"Interference 0.35 is derived from that mixed figure (the readers' share if the writer kept its 1.7 GB/s), not measured as such; " +
			"the 1-writer point (1.7 GB/s) is chosen so that writes peak at 3-4 threads as Izraelevitz et al. show " +
			"(SKYE O2 reports 2.2 GB/s from one thread with 512 B writes); points between the published ones are interpolated. " +
			"Remote access (a CPU on another NUMA node): SKYE O6, 3x lower write and 2.5x lower read throughput",
		Model: &Model{
			SeqRead:     []Level{{1, 3.9}, {2, 5.0}, {4, 6.0}, {6, 6.6}, {8, 6.4}, {12, 6.1}, {16, 5.8}},
			RandRead:    []Level{{1, 2.1}, {2, 3.4}, {4, 5.0}, {6, 5.85}, {8, 5.8}, {12, 5.6}, {16, 5.4}},
			Write:       []Level{{1, 1.7}, {2, 2.05}, {3, 2.2}, {4, 2.3}, {6, 2.0}, {8, 1.7}, {12, 1.4}, {16, 1.2}},
			Granularity: 256, WriteBuffer: 16 << 10, ReadNs: 305, WriteNs: 94,
			RemoteRead: 2.5, RemoteWrite: 3,
		}})
}

// optane6Profile: six DIMMs of one socket, interleaved at 4 KiB.
func optane6Profile() *Profile {
	return withPeaks(&Profile{Device: "optane-6dimm", Interference: 0.35, MovntThreshold: 256, PersistNs: 94,
		Source: "SKYE (papers/002) §3 summary for the 6 DIMMs of one node: 12.7 GB/s sequential write, falling to 10.5 GB/s " +
			"with interleaving (O5), 31.5 GB/s random read; sequential read 6 x 6.6 GB/s (Izraelevitz et al. 2019; " +
			"SKYE's 162 GB/s over 24 DIMMs is 6.75 per DIMM); unit, buffer (6 x 16 KiB), latencies and interference as optane-1dimm; " +
			"the thread counts of the knees (writes ~12, reads ~24) are assumed from six DIMMs each peaking at 2-4 writers and 4-6 readers, not measured; remote access as optane-1dimm (SKYE O6)",
		Model: &Model{
			SeqRead:     []Level{{1, 4.0}, {2, 7.5}, {4, 14}, {8, 25}, {12, 32}, {16, 36}, {24, 39.6}, {32, 38}},
			RandRead:    []Level{{1, 2.2}, {2, 4.2}, {4, 8.5}, {8, 17}, {12, 24}, {16, 28}, {24, 31.5}, {32, 30}},
			Write:       []Level{{1, 2.0}, {2, 3.8}, {4, 7.0}, {8, 11.0}, {12, 12.7}, {16, 12.0}, {24, 10.5}, {32, 9.5}},
			Granularity: 256, WriteBuffer: 6 * 16 << 10, ReadNs: 305, WriteNs: 94,
			RemoteRead: 2.5, RemoteWrite: 3,
		}})
}

// cxlProfile: a CXL memory-semantic SSD (Samsung, 2022) as the seeds
// describe it.
func cxlProfile() *Profile {
	return withPeaks(&Profile{Device: "cxl-mssd", Interference: 1, MovntThreshold: 256,
		Source: "WiscSort (papers/000) §1: CXL byte-addressable storage, 230 ns access latency and 32 GB/s on PCIe Gen 5 (Samsung 2022); " +
			"SKYE (papers/002) §6.1: CXL-attached PM writes at 2.23 GB/s at most, with 4 writers and 512 B writes; " +
			"§7: the memory-semantic SSD has a DRAM cache (like the XPBuffer) over coarse-grained SSD media. " +
			"Assumed, not from the seeds: 4 KiB media unit, a 64 MiB write cache, the read curve's shape up to the 32 GB/s link, " +
			"no read-under-write interference (the seeds give no figure). " +
			"No remote penalty: CXL memory is behind a link from every socket alike, and its curves are already those of that link",
		Model: &Model{
			SeqRead:     []Level{{1, 6}, {2, 11}, {4, 20}, {8, 30}, {16, 32}},
			RandRead:    []Level{{1, 3}, {2, 6}, {4, 11}, {8, 19}, {16, 26}, {32, 30}},
			Write:       []Level{{1, 1.1}, {2, 1.7}, {3, 2.0}, {4, 2.23}, {6, 2.1}, {8, 1.9}, {16, 1.6}},
			Granularity: 4096, WriteBuffer: 64 << 20, ReadNs: 230,
			RemoteRead: 1, RemoteWrite: 1,
		}})
}
