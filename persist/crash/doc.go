// Package crash is braid's crash simulator: it proves, inside an ordinary
// go test, that every crash leaves a persistent structure recoverable.
//
// A simulated region (persist.NewSimulated, made for you by Check) keeps two
// images: the live bytes the program reads and writes, and the media image —
// what would survive a power failure. A Flush captures its lines as they are
// at that moment (a store made after the flush is not covered by it); a
// streaming copy captures only the words it wrote; a fence makes what was
// captured durable, in every region of the test (fences are global). In
// eADR mode (persist.ModeEADR) a fence makes every store so far durable; in
// msync mode (persist.ModeMsync) a Flush syncs the whole pages of its range:
// it captures them and fences. Stores are not intercepted: at a crash point
// the simulator compares live and media and finds every dirty 8-byte word.
//
// At each crash point the simulator builds crash images: each dirty word,
// and each captured value still in flight, may or may not have reached
// media (8-byte aligned words never tear; with Config.LineAtomic whole lines
// never tear). When the combinations are at most Config.MaxImages they are
// all checked, else a seeded choice: nothing survived, everything survived,
// each word alone lost, each word alone survived, then random subsets. Every
// image becomes fresh simulated regions on which the user's check runs
// recovery and compares the result with what the workload acknowledged.
// Some images also get crashes injected into their recovery: a recovery
// must survive its own crash. A failure is shrunk to the fewest surviving
// words and reported with the seed, the fence number, the source line of
// that fence, the words that survived, and a command line that replays
// exactly that image, once.
//
// Crash points: every fence (or the k-th, a seeded sample, or the first of
// every distinct call stack), operation boundaries (Run.Boundary and
// Run.Durable), region close, the end of the workload, and on demand
// (Run.Crash). Several regions crash together: a data file and a metadata
// file persisted in the wrong order are caught. Regions can start filled
// with seeded garbage (Spec.Garbage), so recovery that trusts bytes it never
// wrote is caught. Redundant flushes and fences and stores still unflushed
// at close are reported as findings; data not durable at a durability point
// (Run.Durable) is a failure.
//
// # Crash-testing your own structure, step by step
//
// 1. Write the structure against *persist.Region: all flushing and fencing
// through the region, commit words with persist.Store64, offsets (not
// pointers) inside the region.
//
// 2. Write a workload that creates the structure on w.Region(name) and
// performs operations, recording in variables what has been acknowledged
// (the operation returned) and what is in flight. Reset those variables at
// the top of the workload: it may run more than once. Mark each returned
// operation with w.Durable("op"): the simulator then fails the test if
// anything written is not yet durable.
//
//	var created bool      // Create returned: the structure exists
//	var acked [][]byte    // appends that returned
//	var inflight []byte   // the append running, if any
//	workload := func(w *crash.Run) error {
//		created, acked, inflight = false, nil, nil
//		l, err := mylog.Create(w.Region("log"))
//		if err != nil {
//			return err
//		}
//		created = true
//		for _, e := range entries {
//			inflight = e
//			if err := l.Append(e); err != nil {
//				return err
//			}
//			acked, inflight = append(acked, e), nil
//			w.Durable("append")
//		}
//		return nil
//	}
//
// 3. Write a check that recovers from the image and compares with what the
// workload acknowledged. It runs synchronously inside the workload's fence,
// so it sees the workload's variables as they were at the crash. Return an
// error describing any violation. The check is also called from inside
// itself: the fences its recovery issues are crash points too (the images
// of a crash during recovery, Image.InRecovery), so keep its state in local
// variables. Do not keep the image's regions after the check returns.
//
//	check := func(img *crash.Image) error {
//		l, err := mylog.Open(img.Region("log")) // recovery
//		if !created && errors.Is(err, mylog.ErrNoLog) {
//			return nil // a crash inside Create: no log yet is a correct outcome
//		}
//		if err != nil {
//			return err
//		}
//		defer l.Close()
//		got := l.Entries()
//		switch {
//		case len(got) < len(acked):
//			return fmt.Errorf("%d entries acknowledged, %d recovered", len(acked), len(got))
//		case len(got) > len(acked)+1 || len(got) == len(acked)+1 && inflight == nil:
//			return fmt.Errorf("%d entries recovered, %d acknowledged and none in flight", len(got), len(acked))
//		}
//		// ... every recovered entry equals the one appended (the last one
//		// may be the one in flight, whole)
//		return nil
//	}
//
// A crash can come before the structure exists (inside Create: a check
// must accept "no structure" until Create returned) and in the middle of
// an operation (its new value may or may not be there, whole: a check
// must accept both); the variables above say which.
//
// 4. Run it in a test:
//
//	func TestLog(t *testing.T) {
//		crash.Test(t, crash.Config{Regions: []crash.Spec{{Name: "log", Size: 64 << 10}}}, workload, check)
//	}
//
// go test -v shows what was checked and the findings, for example
//
//	crash: 7 fences, 8 crash points, 24 images, 0 recovery crash points, 0 recovery images in 2ms (15526 images/s), 0 failures
//	  redundant flush x1 at mylog/log.go:25 (mylog.Create): log [0, 8): nothing new to write back
//
// 5. Prove the test has teeth: build a deliberately broken variant (drop a
// flush, swap two persists) and assert that crash.Check reports a failure
// (Report.Failed). crash.Test on it prints what a user would see:
//
//	crash: check failed after a crash at fence 2 at mylog/log.go:64 (mylog.(*Log).Append)
//	  image 1 of 8 (exhaustive), seed 0
//	  survived (reached media beyond the last fence): 1 words
//	    log+0x0: 0x0000000000000000 -> 0x0000000000000001
//	  check: entry 0 recovered as ""
//	  replay: (cd /src/mylog && BRAID_CRASH_REPLAY='seq=2 image=1 keep=0:1 test=TestLogBroken call=1' go test -count=1 -run '^TestLogBroken$' -v .)
//
// The replay line runs that test again, with the same -race and -tags; the
// crash test it names checks that one image, as shown (after shrinking),
// and no other (the report says "replay of ..."); other crash tests of the
// test run in full. Put a breakpoint or a print in the check and run it.
//
// What is not explored: a word stored several times between two flushes
// is only considered with its media value, the values captured by flushes
// and its latest value — an intermediate value that was overwritten before
// any flush (which a cache eviction at the wrong moment could persist) is
// not. Write-back order within one 8-byte word is respected.
//
// Workloads that run goroutines concurrently get crash points at their
// fences too, but which stores of the other goroutines a crash image holds
// then depends on scheduling: reproduce with single-goroutine workloads.
//
// # Cost
//
// Regions under 1 MiB are Go memory and their images copies. Larger ones
// (on Linux) live in a memfd: the workload's memory is a private mapping of
// the media file, each image another one, so an image costs what its
// recovery touches, and the kernel's page tables (/proc/self/pagemap) tell
// which pages the workload wrote, so a crash point compares only those
// with media, not the whole region. The workload's regions are unmapped
// when Check returns: do not keep their Bytes. See the README for images/s
// and the cost per crash point by region size. Keep regions small and the
// structures in them sized explicitly (a walog log of 64 KiB, not one
// that fills a 4 MiB region): recovery runs once per image, and what it
// scans is most of a crash test's time.
package crash
