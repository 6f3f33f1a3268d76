package ycsb

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
)

// Op is an operation type of the core workload, named as YCSB reports it.
type Op int

// The operation types.
const (
	Insert Op = iota
	Read
	Update
	Scan
	ReadModifyWrite
	numOps
)

var opNames = [numOps]string{"INSERT", "READ", "UPDATE", "SCAN", "READ-MODIFY-WRITE"}

func (o Op) String() string { return opNames[o] }

// Request distributions (CoreWorkload's requestdistribution).
const (
	DistUniform = "uniform"
	DistZipfian = "zipfian"
	DistLatest  = "latest"
)

// Workload is one of YCSB's core workloads: the operation mix and request
// distribution of its property file (workloads/workloada ... workloadf).
type Workload struct {
	Name                            string
	Read, Update, Insert, Scan, RMW float64 // proportions, summing to 1
	Distribution                    string  // uniform, zipfian or latest
	MaxScanLength                   int     // scan lengths are uniform in [1, MaxScanLength]
	Description                     string
}

// Core is YCSB's core workloads A-F as their property files define them
// (readallfields, one field: here a key has one value).
var Core = []Workload{
	{Name: "A", Read: 0.5, Update: 0.5, Distribution: DistZipfian, Description: "update heavy: 50% read, 50% update, zipfian"},
	{Name: "B", Read: 0.95, Update: 0.05, Distribution: DistZipfian, Description: "read mostly: 95% read, 5% update, zipfian"},
	{Name: "C", Read: 1, Distribution: DistZipfian, Description: "read only, zipfian"},
	{Name: "D", Read: 0.95, Insert: 0.05, Distribution: DistLatest, Description: "read latest: 95% read, 5% insert, latest"},
	{Name: "E", Scan: 0.95, Insert: 0.05, Distribution: DistZipfian, MaxScanLength: 100, Description: "short ranges: 95% scan (uniform 1-100 records), 5% insert, zipfian"},
	{Name: "F", Read: 0.5, RMW: 0.5, Distribution: DistZipfian, Description: "read-modify-write: 50% read, 50% read-modify-write, zipfian"},
}

// LoadPhase is the name of the load phase (every record inserted once, in
// key-number order, as YCSB's -load).
const LoadPhase = "load"

// Lookup returns the core workload named name (a-f or A-F, with or without
// a "workload" prefix).
func Lookup(name string) (Workload, error) {
	n := strings.ToUpper(strings.TrimPrefix(strings.ToLower(name), "workload"))
	for _, w := range Core {
		if w.Name == n {
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("unknown workload %q (want load or one of a, b, c, d, e, f)", name)
}

// Scans reports whether w has scans (needs an ordered engine).
func (w Workload) Scans() bool { return w.Scan > 0 }

// pick chooses the operation for u in [0, 1) (DiscreteGenerator).
func (w *Workload) pick(u float64) Op {
	for _, c := range [...]struct {
		p  float64
		op Op
	}{{w.Read, Read}, {w.Update, Update}, {w.Insert, Insert}, {w.Scan, Scan}, {w.RMW, ReadModifyWrite}} {
		if u < c.p {
			return c.op
		}
		u -= c.p
	}
	return Read // rounding: the proportions sum to 1
}

// KeyFormat says how a key number becomes a key (CoreWorkload's
// insertorder and zeropadding).
type KeyFormat struct {
	// Ordered: "user" + the key number (insertorder=ordered); otherwise
	// "user" + FNVHash64 of it (insertorder=hashed, YCSB's default).
	Ordered bool
	// ZeroPadding pads the number with zeros to this many digits (YCSB's
	// default 1: no padding).
	ZeroPadding int
}

// Append appends the key of key number n to dst (CoreWorkload.buildKeyName).
func (f KeyFormat) Append(dst []byte, n int64) []byte {
	if !f.Ordered {
		n = FNVHash64(n)
	}
	dst = append(dst, "user"...)
	var num [20]byte
	s := strconv.AppendInt(num[:0], n, 10)
	for i := len(s); i < f.ZeroPadding; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// MinValueSize is the smallest value the driver writes: the version and
// the key number it embeds (dataintegrity).
const MinValueSize = 16

// AppendValue appends the value of version v of key number n, size bytes
// (at least MinValueSize): v and n little-endian, then bytes derived from
// both. YCSB's dataintegrity derives a field from its key alone; carrying
// the version lets a read tell a current value from a stale one.
func AppendValue(dst []byte, n int64, v uint32, size int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(n))
	s := mix(uint64(n)*0x9E3779B97F4A7C15 ^ uint64(v))
	var w [8]byte
	for rem := size - MinValueSize; rem > 0; rem -= 8 {
		s = mix(s)
		binary.LittleEndian.PutUint64(w[:], s)
		dst = append(dst, w[:min(rem, 8)]...)
	}
	return dst
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// decodeValue returns the version and key number a value says it is.
func decodeValue(val []byte) (v uint32, n int64, ok bool) {
	if len(val) < MinValueSize {
		return 0, 0, false
	}
	v64 := binary.LittleEndian.Uint64(val)
	if v64 == 0 || v64 > 1<<32-1 {
		return 0, 0, false
	}
	return uint32(v64), int64(binary.LittleEndian.Uint64(val[8:])), true
}

// Verdict is what a verified read found (YCSB's dataintegrity counts).
type Verdict int

// The verdicts.
const (
	Correct Verdict = iota // the value of a version that may be current
	Wrong                  // other bytes, another key's value, or a version older than one acknowledged (a lost write)
	Missing                // not found, though an insert of the key was acknowledged
)

// Verify counts the verdicts of a run (-verify).
type Verify struct {
	Correct int64 `json:"correct"`
	Wrong   int64 `json:"wrong"`
	Missing int64 `json:"missing"`
}

// Add counts one verdict.
func (v *Verify) Add(d Verdict) {
	switch d {
	case Correct:
		v.Correct++
	case Wrong:
		v.Wrong++
	default:
		v.Missing++
	}
}

// AllCorrect reports whether every verified read was correct.
func (v Verify) AllCorrect() bool { return v.Wrong == 0 && v.Missing == 0 }

func (v *Verify) merge(o Verify) {
	v.Correct += o.Correct
	v.Wrong += o.Wrong
	v.Missing += o.Missing
}

// versions tracks, per key number, the last version handed out (issued)
// and the highest acknowledged (acked), so that a read can be judged:
// a read that started after version a was acknowledged and ended before
// version i+1 was handed out may return any version in [a, i].
type versions struct {
	chunks [1 << 16]atomic.Pointer[versionChunk]
}

const chunkBits = 16

type versionChunk [1 << chunkBits]keyVersion

type keyVersion struct {
	issued, acked atomic.Uint32
	// writing serializes the writes of one key when reads are verified:
	// two overlapping puts of a key may take effect in either order, so
	// only puts that do not overlap give the versions an order a read can
	// be judged by. Reads do not take it.
	writing atomic.Bool
}

func (kv *keyVersion) lock() {
	for !kv.writing.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func (kv *keyVersion) unlock() { kv.writing.Store(false) }

// at returns key number n's entry, making its chunk when needed.
func (vs *versions) at(n int64) *keyVersion {
	ci := uint64(n) >> chunkBits
	if ci >= uint64(len(vs.chunks)) {
		ci = uint64(len(vs.chunks)) - 1 // beyond 2^32 keys: shared (the check only loosens)
	}
	c := vs.chunks[ci].Load()
	if c == nil {
		vs.chunks[ci].CompareAndSwap(nil, new(versionChunk))
		c = vs.chunks[ci].Load()
	}
	return &c[uint64(n)&(1<<chunkBits-1)]
}

// ack records that version v of the key was acknowledged.
func (kv *keyVersion) ack(v uint32) {
	for {
		a := kv.acked.Load()
		if a >= v || kv.acked.CompareAndSwap(a, v) {
			return
		}
	}
}

// judge is the verdict on val (nil: not found), read for key number n
// whose key is key, with acked (lo) loaded before the read and issued
// (hi) after it. lo 0 skips the staleness check (scans: see Run).
func judge(f KeyFormat, n int64, key, val []byte, found bool, lo, hi uint32) Verdict {
	if !found {
		if lo == 0 && hi == 0 {
			return Correct // never written: absent is right
		}
		return Missing
	}
	v, vn, ok := decodeValue(val)
	if !ok || vn != n || v < lo || v > hi {
		return Wrong
	}
	if n >= 0 && key != nil {
		var kb [32]byte
		if string(f.Append(kb[:0], n)) != string(key) {
			return Wrong
		}
	}
	var buf [256]byte
	want := AppendValue(buf[:0], n, v, len(val))
	if string(want) != string(val) {
		return Wrong
	}
	return Correct
}
