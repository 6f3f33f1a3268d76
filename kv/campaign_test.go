package kv

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// The corruption campaign: random media damage to closed and to crashed
// stores, and what Open makes of it. Each trial builds a small store from
// a seed (one device, one or two workers, 16 KiB segments; puts, deletes,
// batches, checkpoints and GC passes on 24 keys), closes it — or abandons
// it after its last write returned, as a crash leaves it —, damages one
// thing once and reopens it:
//
//   - a segment header, a metadata log (anywhere in it, or around a
//     worker's end), a data segment's records: zeroes, garbage or flipped
//     bits in 8 bytes, a line, a 256-byte unit, a 4 KiB page or a short run;
//   - a checkpoint file damaged the same way, cut short or removed;
//   - a segment file cut short or removed, the device's kv.id removed.
//
// Then it reads every key and sorts the trial:
//
//	intact        every key reads its acknowledged value, nothing reported
//	repaired      the same, with something reported (a damaged checkpoint
//	              skipped, bytes after a log's end zeroed)
//	refused       Open failed with ErrCorrupt or ErrBadFormat, wrote nothing
//	reported      some keys read ErrCorrupt (or ErrMedia), none lost
//	lost-reported keys lost (ErrNotFound, or an older acknowledged value),
//	              with Recovery() or Check() reporting damage
//	lost-end      a crashed store lost keys, unreported, to damage reaching
//	              into the last batch of a log: what a tear looks like
//	              (README, faults)
//	lost-silent   keys lost and nothing reported: never
//	wrong         a value never acknowledged: never
//	wrote         a refused Open changed the files: never
//	other-error   an error of another kind: never
var (
	campaignTrials = flag.Int("campaign", 100, "trials of the kv corruption campaign")
	campaignLog    = flag.Bool("campaign-log", false, "log every trial that lost or reported keys")
)

type campaignTrial struct {
	o        *Options
	crashed  bool
	latest   map[string]string          // acknowledged value ("" absent)
	history  map[string]map[string]bool // every acknowledged value
	metaEnds map[int]int                // crashed: a worker's metadata segment -> its log end
}

const campaignKeys = 24

// campaignStore runs a trial's workload and closes or abandons the store.
func campaignStore(t *testing.T, rng *structtest.Rand) *campaignTrial {
	dir := structtest.TempShm(t)
	o := &Options{CheckpointDir: filepath.Join(dir, "ckpt"), Devices: []string{filepath.Join(dir, "dev0")},
		SegmentSize: 16 << 10, DeviceSize: 24 * 16 << 10, WorkersPerDevice: 1 + rng.Intn(2), PMem: true,
		GCThreshold: -1, NoStartupGC: rng.Intn(2) == 0, MaxValue: 1000}
	require.NoError(t, os.Mkdir(o.Devices[0], 0o755))
	tr := &campaignTrial{o: o, crashed: rng.Intn(2) == 0, latest: map[string]string{}, history: map[string]map[string]bool{}}
	s := mustOpen(t, o)
	ack := func(k, v string) {
		tr.latest[k] = v
		if tr.history[k] == nil {
			tr.history[k] = map[string]bool{"": true}
		}
		tr.history[k][v] = true
	}
	val := func(i int) string {
		return fmt.Sprintf("v%d-%s", i, bytes.Repeat([]byte{byte('a' + i%26)}, rng.Intn(300)))
	}
	ops := 40 + rng.Intn(160)
	for i := range ops {
		k := fmt.Sprintf("key%02d", rng.Intn(campaignKeys))
		switch r := rng.Intn(100); {
		case r < 60:
			v := val(i)
			require.NoError(t, s.Put([]byte(k), []byte(v)))
			ack(k, v)
		case r < 75:
			require.NoError(t, s.Delete([]byte(k)))
			ack(k, "")
		case r < 88:
			var b Batch
			type kv struct{ k, v string }
			var done []kv
			for j := range 2 + rng.Intn(5) {
				k := fmt.Sprintf("key%02d", rng.Intn(campaignKeys))
				if rng.Intn(4) == 0 {
					b.Delete([]byte(k))
					done = append(done, kv{k, ""})
				} else {
					v := val(i*10 + j)
					b.Put([]byte(k), []byte(v))
					done = append(done, kv{k, v})
				}
			}
			require.NoError(t, s.Apply(&b))
			for _, d := range done {
				ack(d.k, d.v)
			}
		case r < 94:
			require.NoError(t, s.Checkpoint())
		default:
			_, err := s.GC()
			require.NoError(t, err)
		}
	}
	if tr.crashed {
		tr.metaEnds = map[int]int{}
		for _, w := range s.workers {
			if w.m.g != nil {
				tr.metaEnds[w.m.g.idx] = w.m.tail
			}
		}
		s.abandon()
	} else {
		require.NoError(t, s.Close())
	}
	return tr
}

// campaignDamage damages the closed store once and says what it did; it
// returns the segment and range it hit (seg -1: not a segment's bytes).
func campaignDamage(t *testing.T, rng *structtest.Rand, tr *campaignTrial) (what string, seg int, d structtest.Damage) {
	dev := tr.o.Devices[0]
	segs, _ := filepath.Glob(filepath.Join(dev, "seg-*.kv"))
	ckpts, _ := filepath.Glob(filepath.Join(tr.o.CheckpointDir, ckptPrefix+"*"))
	slices.Sort(ckpts)
	kinds := map[uint8][]int{}
	for i, p := range segs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if h, err := decodeSegHeader(b); err == nil {
			kinds[h.kind] = append(kinds[h.kind], i)
		}
	}
	pick := func(xs []int) int {
		if len(xs) == 0 {
			return rng.Intn(len(segs))
		}
		return xs[rng.Intn(len(xs))]
	}
	sizes := []int{8, 64, 256, 4096, 1 + rng.Intn(24)}
	n := sizes[rng.Intn(len(sizes))]
	d = structtest.Damage{N: n, How: structtest.DamageHows[rng.Intn(3)]}
	size := int(tr.o.SegmentSize)
	place := func(lo, hi int) {
		d.Off = lo + rng.Intn(max(1, hi-lo))
		if n >= 8 && n != 24 {
			d.Off &^= n - 1
		}
		d.N = min(n, size-d.Off)
	}
	seg = -1
	switch k := rng.Intn(20); {
	case k < 3: // a segment header
		seg = rng.Intn(len(segs))
		d.N = min(n, 64)
		place(0, 64)
	case k < 9: // a metadata log
		seg = pick(kinds[kindMeta])
		end := size
		if e, ok := tr.metaEnds[seg]; ok && rng.Intn(2) == 0 {
			end = e
			place(max(bodyOff, end-768), min(size, end+256))
		} else {
			place(bodyOff, end)
		}
	case k < 13: // data records
		seg = pick(kinds[kindData])
		place(bodyOff, size)
	case k < 17 && len(ckpts) > 0: // a checkpoint
		p := ckpts[rng.Intn(len(ckpts))]
		if len(ckpts) > 1 && rng.Intn(2) == 0 {
			p = ckpts[len(ckpts)-1] // the newest more often
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		switch rng.Intn(4) {
		case 0:
			require.NoError(t, os.Remove(p))
			return "removed " + filepath.Base(p), -1, d
		case 1:
			cut := rng.Intn(len(b))
			require.NoError(t, os.WriteFile(p, b[:cut], 0o644))
			return fmt.Sprintf("%s cut to %d of %d bytes", filepath.Base(p), cut, len(b)), -1, d
		}
		d.Off = rng.Intn(len(b))
		d.N = min(d.N, len(b)-d.Off)
		d.Apply(rng, b)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return fmt.Sprintf("%s: %v", filepath.Base(p), d), -1, d
	default: // files lost or cut short
		switch rng.Intn(3) {
		case 0:
			p := segs[len(segs)-1-rng.Intn(2)]
			require.NoError(t, os.Remove(p))
			return "removed " + filepath.Base(p), -1, d
		case 1:
			p := segs[rng.Intn(len(segs))]
			require.NoError(t, os.Truncate(p, int64(rng.Intn(size))))
			return "cut " + filepath.Base(p), -1, d
		}
		require.NoError(t, os.Remove(filepath.Join(dev, idFile)))
		return "removed " + idFile, -1, d
	}
	p := segs[seg]
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	d.Apply(rng, b)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return fmt.Sprintf("segment %d: %v", seg, d), seg, d
}

// storeFiles reads every file of the store.
func storeFiles(t *testing.T, o *Options) map[string][]byte {
	m := map[string][]byte{}
	for _, dir := range append([]string{o.CheckpointDir}, o.Devices...) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			m[filepath.Join(dir, e.Name())] = b
		}
	}
	return m
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// lastBatchStart is the offset of the last valid batch start of the log
// in metadata segment seg before end (-1: none).
func lastBatchStart(t *testing.T, o *Options, seg, end int) int {
	b, err := os.ReadFile(segFile(o, 0, seg))
	require.NoError(t, err)
	h, err := decodeSegHeader(b)
	require.NoError(t, err)
	last := -1
	for off := bodyOff; off+entrySize <= end; off += entrySize {
		if e, st := decodeEntry(b[off:off+entrySize], h.epoch); st == entryOK && e.first {
			last = off
		}
	}
	return last
}

// campaignJudge opens the damaged store and sorts the trial.
func campaignJudge(t *testing.T, tr *campaignTrial, before map[string][]byte, seg int, d structtest.Damage, lastStart int) (string, string) {
	s, err := Open(tr.o)
	if err != nil {
		switch {
		case !sameFiles(before, storeFiles(t, tr.o)):
			return "wrote", err.Error()
		case errors.Is(err, persist.ErrCorrupt) || errors.Is(err, persist.ErrBadFormat):
			return "refused", err.Error()
		}
		return "other-error", err.Error()
	}
	defer s.Close()
	var lost, reported, wrong, other []string
	for k, want := range tr.latest {
		v, err := s.Get([]byte(k))
		switch {
		case errors.Is(err, ErrNotFound):
			if want != "" {
				lost = append(lost, k)
			}
		case errors.Is(err, persist.ErrCorrupt) || errors.Is(err, persist.ErrMedia):
			reported = append(reported, k)
		case err != nil:
			other = append(other, k+": "+err.Error())
		case string(v) == want:
		case tr.history[k][string(v)]:
			lost = append(lost, k) // an older acknowledged value came back
		default:
			wrong = append(wrong, k)
		}
	}
	rep := s.Recovery()
	checkErr := s.Check()
	noted := rep.Torn > 0 || rep.DataPastEnd > 0 || rep.TornEntries > 0 || rep.CorruptValues > 0 || rep.SkippedCheckpts > 0 || rep.ZeroedHeaders > 0 ||
		rep.LostSegments > 0 || rep.MediaLost > 0 || rep.GC.Quarantined > 0 || checkErr != nil
	info := fmt.Sprintf("lost %v, reported %v, wrong %v, other %v; report %+v; check %v", lost, reported, wrong, other, rep, checkErr)
	_, atEnd := tr.metaEnds[seg]
	switch {
	case len(wrong) > 0:
		return "wrong", info
	case len(other) > 0:
		return "other-error", info
	case len(lost) > 0 && noted:
		return "lost-reported", info
	case len(lost) > 0 && tr.crashed && atEnd && lastStart >= 0 && d.Off+d.N > lastStart && d.Off < tr.metaEnds[seg]:
		return "lost-end", info
	case len(lost) > 0:
		return "lost-silent", info
	case len(reported) > 0:
		return "reported", info
	case noted:
		return "repaired", info
	}
	return "intact", info
}

// TestCampaign runs the corruption campaign: nothing acknowledged is lost
// without a report (a crashed store's wiped-out last batch aside, the
// documented limit), no value that was not acknowledged comes back, and a
// refused Open writes nothing. go test -run TestCampaign -campaign 2000
// runs a larger one (kv/README.md).
func TestCampaign(t *testing.T) {
	counts, byState := map[string]int{}, map[string]int{}
	first := map[string]string{}
	for i := range *campaignTrials {
		rng := structtest.NewRand(uint64(i) + 1)
		tr := campaignStore(t, rng)
		starts := map[int]int{} // before the damage
		for seg, end := range tr.metaEnds {
			starts[seg] = lastBatchStart(t, tr.o, seg, end)
		}
		what, seg, d := campaignDamage(t, rng, tr)
		lastStart := -1
		if _, ok := tr.metaEnds[seg]; ok {
			lastStart = starts[seg]
		}
		before := storeFiles(t, tr.o)
		kind, info := campaignJudge(t, tr, before, seg, d, lastStart)
		counts[kind]++
		state := "closed"
		if tr.crashed {
			state = "crashed"
		}
		byState[state+" "+kind]++
		line := fmt.Sprintf("trial %d (%s, %d workers): %s: %s", i, state, tr.o.WorkersPerDevice, what, info)
		if first[kind] == "" {
			first[kind] = line
		}
		if *campaignLog && kind != "intact" && kind != "repaired" && kind != "refused" {
			t.Logf("%s: %.300s", kind, line)
		}
	}
	t.Logf("%d trials: %v", *campaignTrials, counts)
	t.Logf("by state: %v", byState)
	for _, k := range []string{"lost-end", "lost-reported", "reported", "refused"} {
		if first[k] != "" {
			t.Logf("first %s: %s", k, first[k])
		}
	}
	for _, k := range []string{"lost-silent", "wrong", "wrote", "other-error"} {
		if counts[k] > 0 {
			t.Errorf("%d trials %s; first: %s", counts[k], k, first[k])
		}
	}
}
