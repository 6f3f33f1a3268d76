package main

import (
	"cmp"
	"slices"

	"github.com/braid-pm/braid/persist/device"
)

type persistPoint = device.Point

// How the profile summarizes the points.
const (
	// kneeFraction: the knee is the fewest threads reaching this share of
	// the peak bandwidth — more threads buy less than 5%.
	kneeFraction = 0.95
	// randMaxSize: random peaks are taken over accesses up to 4 KiB; a
	// random 64 KiB access is a sequential one in all but name.
	randMaxSize = 4096
	// ntMargin: streaming stores must be this much faster than
	// store+flush to count as faster, so that noise around a tie does
	// not move the threshold from run to run.
	ntMargin = 0.02
)

// summarize computes the profile from measured results; the header fields
// (device, mapping, CPU, date) are left to the caller.
//
//   - SeqRead, RandRead: op "read", pattern "seq" / "rand".
//   - SeqWrite, RandWrite: op "write-nt" (durable streaming writes).
//   - Interference: read GB/s of pattern "mixed" over pattern "alone"
//     (same size and threads).
//   - MovntThreshold: from the "copy-nt" and "copy-temporal" points.
//   - PersistNs: op "persist", pattern "seq": the median of its timed
//     run, else its mean.
//
// A figure whose points are missing stays 0.
func summarize(rs []result) device.Profile {
	points := pointsOf(rs)
	return device.Profile{
		Format:         device.ProfileFormat,
		SeqRead:        peak(points, "read", "seq", 0),
		RandRead:       peak(points, "read", "rand", randMaxSize),
		SeqWrite:       peak(points, "write-nt", "seq", 0),
		RandWrite:      peak(points, "write-nt", "rand", randMaxSize),
		Interference:   interference(points),
		MovntThreshold: movntThreshold(points),
		PersistNs:      persistNs(rs),
		Points:         points,
	}
}

// peak is the best bandwidth of one access type over sizes (up to maxSize;
// 0 = any) and thread counts. Threads and Knee are read off the curve of
// the size that reached it: Threads where the curve peaks, Knee the fewest
// threads within kneeFraction of that peak.
func peak(points []device.Point, op, pattern string, maxSize int) device.Peak {
	var best *device.Point
	for i := range points {
		p := &points[i]
		if p.Op != op || p.Pattern != pattern || (maxSize > 0 && p.Size > maxSize) {
			continue
		}
		if best == nil || p.GBs > best.GBs ||
			(p.GBs == best.GBs && (p.Threads < best.Threads || (p.Threads == best.Threads && p.Size < best.Size))) {
			best = p
		}
	}
	if best == nil || best.GBs <= 0 {
		return device.Peak{}
	}
	var curve []device.Point
	for _, p := range points {
		if p.Op == op && p.Pattern == pattern && p.Size == best.Size {
			curve = append(curve, p)
		}
	}
	return knee(curve)
}

// knee summarizes one bandwidth-over-threads curve.
func knee(curve []device.Point) device.Peak {
	var pk device.Peak
	for _, p := range curve {
		if p.GBs > pk.GBs || (p.GBs == pk.GBs && p.Threads < pk.Threads) {
			pk.GBs, pk.Threads = p.GBs, p.Threads
		}
	}
	if pk.GBs <= 0 {
		return device.Peak{}
	}
	pk.Knee = pk.Threads
	for _, p := range curve {
		if p.GBs >= kneeFraction*pk.GBs && p.Threads < pk.Knee {
			pk.Knee = p.Threads
		}
	}
	return pk
}

// interference is the read bandwidth next to writers over the read
// bandwidth alone, from the first "read"/"mixed" point that has an
// "alone" twin; 0 when none was measured.
func interference(points []device.Point) float64 {
	for _, m := range points {
		if m.Op != "read" || m.Pattern != "mixed" {
			continue
		}
		for _, a := range points {
			if a.Op == "read" && a.Pattern == "alone" && a.Size == m.Size && a.Threads == m.Threads && a.GBs > 0 {
				return m.GBs / a.GBs
			}
		}
	}
	return 0
}

// movntThreshold is the smallest copy size from which streaming stores
// are faster than store+flush (by ntMargin) at every larger size measured.
// When they are not faster at the largest size, it is twice that size;
// without copy points, 0.
func movntThreshold(points []device.Point) int {
	type pair struct{ nt, t float64 }
	bySize := map[int]*pair{}
	for _, p := range points {
		if p.Op != "copy-nt" && p.Op != "copy-temporal" {
			continue
		}
		q := bySize[p.Size]
		if q == nil {
			q = &pair{}
			bySize[p.Size] = q
		}
		if p.Op == "copy-nt" {
			q.nt = p.NsPerOp
		} else {
			q.t = p.NsPerOp
		}
	}
	var sizes []int
	for s, q := range bySize {
		if q.nt > 0 && q.t > 0 {
			sizes = append(sizes, s)
		}
	}
	if len(sizes) == 0 {
		return 0
	}
	slices.SortFunc(sizes, cmp.Compare)
	th := 2 * sizes[len(sizes)-1]
	for i := len(sizes) - 1; i >= 0; i-- {
		q := bySize[sizes[i]]
		if q.nt > (1-ntMargin)*q.t {
			break
		}
		th = sizes[i]
	}
	return th
}

// persistNs is the latency of a Store64 + Persist on consecutive lines —
// a commit word's usual case: the median of the timed run, which a
// preempted moment does not move, else the mean; 0 when not measured.
func persistNs(rs []result) float64 {
	for _, r := range rs {
		if r.Op == "persist" && r.Pattern == "seq" {
			if r.P50Ns > 0 {
				return r.P50Ns
			}
			return r.NsPerOp
		}
	}
	return 0
}

func pointsOf(rs []result) []device.Point {
	pts := make([]device.Point, len(rs))
	for i, r := range rs {
		pts[i] = r.Point
	}
	return pts
}
