//go:build linux

package kv

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// Poisoned crash images (persist/crash's poison model): the crash
// workload on segments of three pages, and in each image one segment of
// device 0 (a different one each image) poisoned at the site's page —
// its header, the page in its middle, its last page. Recovery must open
// (no process death, no refusal), report the poisoned segment, and serve
// every key as one of the values the workload wrote for it (its
// acknowledged or in-flight value, an older one when the entry naming the
// newest was lost, or nothing) or ErrMedia — never bytes no put wrote;
// Check passes or reports ErrMedia; a put after recovery wins. Across the
// images, poison must have cost entries (MediaLost) and, at the header
// site, segments (LostSegments).

const poisonSegSize = 3 * 4096

func poisonCrashConfig(seed uint64, images int) crash.Config {
	cfg := crash.Config{Seed: seed, MaxImages: images, Pairs: 4, MaxAlone: images, RecoveryCrashes: -1, SampleFences: 12}
	for d := range crashDevs {
		for j := range crashSegs {
			cfg.Regions = append(cfg.Regions, crash.Spec{Name: segRegion(d, j), Size: poisonSegSize})
		}
	}
	return cfg
}

func poisonCrashOptions(region func(string) *persist.Region, fs *memDir, b broken) *Options {
	o := crashOptions(region, fs, b)
	o.SegmentSize = poisonSegSize
	return o
}

type poisonCrashSeen struct{ images, lostEntries, lostSegs, served, media int }

func poisonCrashCheck(ops []crashOp, m *crashModel, b broken, page int, seen *poisonCrashSeen) func(*crash.Image) error {
	written := map[string]map[string]bool{}
	for _, op := range ops {
		for j, k := range op.keys {
			if written[k] == nil {
				written[k] = map[string]bool{"": true}
			}
			written[k][op.vals[j]] = true
		}
	}
	return func(img *crash.Image) error {
		seg := segRegion(0, seen.images%crashSegs)
		seen.images++
		if err := img.Poison(seg, page, 1); err != nil {
			return err
		}
		fs := m.disk.clone()
		s, err := Open(poisonCrashOptions(img.Region, fs, b))
		if err != nil {
			return fmt.Errorf("recovery with %s poisoned at %d: %w", seg, page, err)
		}
		defer s.Close()
		rep := s.Recovery()
		if rep.PoisonedSegments != 1 {
			return fmt.Errorf("recovery reports %d poisoned segments, %s was", rep.PoisonedSegments, seg)
		}
		seen.lostEntries += rep.MediaLost
		seen.lostSegs += rep.LostSegments
		m.mu.Lock()
		acked := maps.Clone(m.acked)
		m.mu.Unlock()
		for i := range 10 {
			k := fmt.Sprintf("k%d", i)
			v, err := s.Get([]byte(k))
			switch {
			case errors.Is(err, persist.ErrMedia):
				seen.media++
				continue
			case errors.Is(err, ErrNotFound):
				v, err = []byte(""), nil
			}
			if err != nil {
				return fmt.Errorf("get %s: %w", k, err)
			}
			if !written[k][string(v)] {
				return fmt.Errorf("key %s recovered as %q, which no put wrote (acknowledged %q)", k, v, acked[k])
			}
			if string(v) == acked[k] {
				seen.served++
			}
		}
		if err := s.Check(); err != nil && !errors.Is(err, persist.ErrMedia) {
			return fmt.Errorf("check: %w", err)
		}
		if err := s.Put([]byte("k0"), []byte("probe")); err != nil {
			return fmt.Errorf("put after recovery: %w", err)
		}
		if v, err := s.Get([]byte("k0")); err != nil || string(v) != "probe" {
			return fmt.Errorf("after recovery, put k0=probe then get gives %q, %v", v, err)
		}
		return nil
	}
}

func TestCrashPoison(t *testing.T) {
	ops := crashOps(3, 240)
	for _, v := range pathVariants {
		for _, site := range structtest.PoisonSites(0, poisonSegSize) {
			t.Run(v.name+"/"+site.Name, func(t *testing.T) {
				m := &crashModel{segSize: poisonSegSize}
				b := broken{workers: v.workers}
				var seen poisonCrashSeen
				rep := crash.Test(t, poisonCrashConfig(3, 8), crashWorkload(ops, b, m), poisonCrashCheck(ops, m, b, site.Off, &seen))
				t.Logf("%v; %+v", rep, seen)
				require.Positive(t, seen.lostEntries, "no image lost an entry to the poison")
				require.Positive(t, seen.served)
				if site.Name == "header" {
					require.Positive(t, seen.lostSegs)
				}
			})
		}
	}
}
