package crash

import (
	"errors"
	"fmt"
)

// errNested carries a failure found by a crash during recovery up to the
// image it happened in.
type errNested struct{ f *Failure }

func (e *errNested) Error() string { return e.f.Err.Error() }

// checkPoint checks the crash images of one crash point of machine m.
func (st *state) checkPoint(m *machine, pt Point) {
	us := m.collectUnits()
	maxImages := st.cfg.MaxImages
	if m.depth > 0 {
		maxImages = max(8, maxImages/4)
		st.report.RecoveryPoints++
	} else {
		st.report.Points++
	}
	var done *[NumClasses]int
	if m.depth == 0 {
		done = &st.report.Coverage.Recovery
	}
	plan := newPlan(us, &st.cfg, maxImages, m.depth == 0 && st.pairsHere(m, len(us.units)), pt.Seq, done)
	if m.depth == 0 {
		st.noteCoverage(plan)
	} else if !plan.exhaustive && plan.aloneCut > 0 {
		st.report.Coverage.RecoveryPartial++
	}
	want := -1 // the image a replay asks for
	if st.replay != nil {
		want = st.replay.image
		if m.depth > 0 {
			want = st.replay.rimage
		} else {
			st.replayImages = plan.planned
		}
	}
	choice := make([]int, len(us.units))
	for {
		i, class, nested, ok := plan.nextImage(choice)
		if !ok || want >= 0 && i > want {
			return
		}
		if want >= 0 && i != want {
			continue
		}
		nested = nested && m.depth == 0 && st.cfg.RecoveryCrashes > 0
		exact := false // the replay of a reported (shrunk) image
		if st.replay != nil && m.depth == 0 {
			st.replayHit = true
			nested = st.replay.rseq > 0
			if st.replay.exact {
				if err := st.replay.apply(us.units, choice); err != nil {
					st.replayErr, st.stopped = err, true
					return
				}
				exact = true
			}
		}
		err := st.runImage(m, pt, plan, i, class, choice, nested)
		if err == nil {
			continue
		}
		if pt.Site == "" {
			pt.Site, pt.Func, pt.Caller = m.stack.site()
		}
		if m.depth > 0 {
			// Report to the recovery's image; stop crashing this recovery.
			m.nestedBudget = 0
			m.nestedErr = &Failure{Recovery: &pt, RecoveryImage: i, RecoverySurvived: survived(us, choice), Err: err}
			return
		}
		st.failImage(m, pt, plan, i, class, choice, exact, err)
		return
	}
}

// failImage reports image i of crash point pt, which failed with err,
// shrunk unless it is a replay of a reported image or failed in a crash
// during its recovery.
func (st *state) failImage(m *machine, pt Point, plan *imagePlan, i, class int, choice []int, exact bool, err error) {
	f := &Failure{Point: pt, Image: i, Images: plan.planned, Exhaustive: plan.exhaustive, Class: class, Seed: st.cfg.Seed, Err: err}
	var ne *errNested
	if errors.As(err, &ne) {
		// Not shrunk: the crash inside the recovery depends on what the
		// recovery found.
		f.Recovery, f.RecoveryImage, f.RecoverySurvived, f.Err = ne.f.Recovery, ne.f.RecoveryImage, ne.f.RecoverySurvived, ne.f.Err
	} else if !exact {
		choice = st.shrink(m, pt, plan, i, choice)
	}
	f.Survived, f.Lost = survived(plan.unitSet, choice), lost(plan.unitSet, choice)
	rseq := 0
	if f.Recovery != nil {
		rseq = f.Recovery.Seq
	}
	f.ReplayKey = st.key(replayKey(pt.Seq, i, plan.units, choice, rseq, f.RecoveryImage))
	f.Schedule = st.schedule()
	if st.scope != nil {
		f.Replay = st.scope.cmd(f.ReplayKey)
	}
	st.fail(f)
}

// pairsHere decides whether a crash point of the workload with n units
// checks every pair of them lost together: at the first crash point of
// each path (stack and shape) with 3 to Config.Pairs units, or at every
// such point with PairsEveryPoint. A path seen with too many units is
// counted as not covered, once.
func (st *state) pairsHere(m *machine, n int) bool {
	if n < 3 || st.cfg.Pairs < 0 {
		return false
	}
	k := pathKey{stackHash(m.stack.pcs[:m.stack.n]), m.shape()}
	if _, seen := st.pairPaths[k]; seen && !st.cfg.PairsEveryPoint {
		return false
	}
	st.pairPaths[k] = struct{}{}
	if n > st.cfg.Pairs {
		c := &st.report.Coverage
		c.PairsSkipped++
		c.PairsSkippedUnits = max(c.PairsSkippedUnits, n)
		return false
	}
	return true
}

// noteCoverage counts a workload crash point's plan in the report.
func (st *state) noteCoverage(p *imagePlan) {
	c := &st.report.Coverage
	n := len(p.units)
	c.MaxUnits = max(c.MaxUnits, n)
	if p.exhaustive {
		c.Exhaustive++
	} else {
		c.Sampled++
		if p.pairs {
			c.PairsPaths++
		}
		if p.aloneCut > 0 {
			c.AloneSkipped++
			c.AloneSkippedUnits += p.aloneCut
		}
	}
	for k := range p.units {
		if u := &p.units[k]; u.n > 2 {
			for x := 1; x < u.n-1; x++ {
				if p.isTorn(u, x) {
					c.TornUnits++
					break
				}
			}
		}
	}
}

// shrink greedily resets surviving units to their media value while the
// check still fails, pass after pass until no unit can go: every unit
// left is needed for the failure.
func (st *state) shrink(m *machine, pt Point, plan *imagePlan, i int, choice []int) []int {
	c := append([]int(nil), choice...)
	if st.cfg.NoShrink {
		return c
	}
	budget := 4096
	for changed := true; changed && budget > 0; {
		changed = false
		for k := range c {
			if c[k] == 0 || budget == 0 {
				continue
			}
			budget--
			old := c[k]
			c[k] = 0
			if st.runImage(m, pt, plan, i, -1, c, false) == nil {
				c[k] = old
			} else {
				changed = true
			}
		}
	}
	return c
}

// survived lists the words of the units that reached media in choice.
func survived(us *unitSet, choice []int) []Word {
	var ws []Word
	for k := range us.units {
		u := &us.units[k]
		if choice[k] == 0 {
			continue
		}
		old, cur := u.cand(us.pool, 0), u.cand(us.pool, choice[k])
		torn := us.isTorn(u, choice[k])
		for x := range cur {
			if cur[x] != old[x] {
				ws = append(ws, Word{Region: u.reg.spec.Name, Off: 8 * (u.word + x), Media: old[x], Value: cur[x], Torn: torn})
			}
		}
	}
	return ws
}

// lost lists the words of the units that did not reach media in choice,
// with the newest value each would have had.
func lost(us *unitSet, choice []int) []Word {
	var ws []Word
	for k := range us.units {
		u := &us.units[k]
		if choice[k] != 0 {
			continue
		}
		old, cur := u.cand(us.pool, 0), u.cand(us.pool, u.n-1)
		for x := range cur {
			if cur[x] != old[x] {
				ws = append(ws, Word{Region: u.reg.spec.Name, Off: 8 * (u.word + x), Media: old[x], Value: cur[x]})
			}
		}
	}
	return ws
}

// runImage materializes image i (choice) of machine m's crash point as
// fresh regions and runs the check on them. class is the image's class,
// -1 for an image re-checked while shrinking.
func (st *state) runImage(m *machine, pt Point, plan *imagePlan, i, class int, choice []int, nested bool) error {
	im := newMachine(st, m.depth+1, nested)
	bufs := make([][]byte, len(m.regions))
	defer func() {
		im.close()
		for k, s := range m.regions {
			if bufs[k] != nil {
				s.store.put(bufs[k])
			}
		}
	}()
	for k, s := range m.regions {
		buf, err := s.store.get()
		if err != nil {
			return fmt.Errorf("crash: materialize image: %w", err)
		}
		bufs[k] = buf
	}
	bw := make([][]uint64, len(bufs))
	for k := range bufs {
		bw[k] = words(bufs[k])
	}
	for k, u := range plan.units {
		if choice[k] != 0 {
			copy(bw[u.reg.idx][u.word:u.word+u.nw], u.cand(plan.pool, choice[k]))
		}
	}
	for k, s := range m.regions {
		if err := im.addImageRegion(s, bufs[k], bw[k], plan, choice, nested); err != nil {
			return err
		}
	}
	if nested {
		im.nestedBudget = 1
	}
	img := &Image{m: im, point: pt, stack: &m.stack, index: i, inRecovery: m.depth > 0}
	switch {
	case class < 0:
		st.report.ShrinkImages++
	case m.depth == 0:
		st.report.Images++
		st.report.Coverage.Images[class]++
		if nested {
			st.report.Coverage.Recovery[class]++
		}
	default:
		st.report.RecoveryImages++
	}
	st.inImage++
	err := callCheck(st.check, img)
	st.inImage--
	if err == nil && im.nestedErr != nil {
		return &errNested{f: im.nestedErr}
	}
	return err
}

// addImageRegion adds the image of region s (in buf, as words bw) to the
// image machine im. An image crashed again (nested) gets a media of its
// own: another image of the same crash, where what it keeps beyond s's
// media is told to the overlay.
func (im *machine) addImageRegion(s *simRegion, buf []byte, bw []uint64, plan *imagePlan, choice []int, nested bool) error {
	if !nested {
		_, err := im.addRegion(s.spec, buf, nil, nopStore{})
		return err
	}
	media, err := s.store.get()
	if err != nil {
		return fmt.Errorf("crash: materialize image: %w", err)
	}
	ov := &overlayStore{base: s.store, media: media}
	mw := words(media)
	for j, u := range plan.units {
		if u.reg == s && choice[j] != 0 {
			for w := u.word; w < u.word+u.nw; w++ {
				mw[w] = bw[w]
				ov.wrote(w)
			}
		}
	}
	r, err := im.addRegion(s.spec, buf, media, ov)
	if err != nil {
		ov.close()
		return err
	}
	r.overlay = ov
	return nil
}

func callCheck(check func(*Image) error, img *Image) error {
	return guarded("check panicked", func() error { return check(img) })
}
