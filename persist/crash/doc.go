// Package crash is braid's crash simulator: it proves, inside an ordinary
// go test, that every crash leaves a persistent structure recoverable.
//
// A simulated region (made for you by Check) keeps the live bytes the
// program reads and writes and the media image — what would survive a
// power failure. At a crash point the simulator compares the two, finds
// every dirty 8-byte word, builds crash images from what may have reached
// media, runs your check (recovery + comparison with what the workload
// acknowledged) on each, and reports every failure with a command line
// that replays exactly that image. example_test.go is a walkthrough: a toy
// log, its crash test, and a broken variant the test catches.
//
// # The model
//
//	event                          effect on media
//	ordinary store                 the word is dirty: after a crash it may or may not have reached media
//	Flush (CLWB)                   each word of the lines is captured with its value now; a later store is not covered
//	streaming store (Copy/Set NT)  only the words written are captured
//	fence (Drain, end of Persist)  the words its goroutine captured reach media, in every region of the test
//	                               (SFENCE for its core); another goroutine's captures stay in flight
//	ModeEADR                       a fence makes every store so far durable; between two fences any subset of
//	                               the stores may survive (stricter than x86, which keeps their program order)
//	ModeMsync                      a Flush syncs its whole pages: captures them and fences
//
// A crash image chooses, for every unit — a dirty or captured 8-byte word,
// or a 64-byte line with Config.LineAtomic — one value: the media value,
// each value captured in flight (in order), or the live value, and for a
// word not written atomically (Config.Tear) also its torn values:
//
//	word written with                   may be found after a crash
//	persist.Store64, a streaming store  old or new, whole
//	anything else (PutUint64, copy,     also with one 4-byte half new (Tear4, the default), or with only its
//	PutUint32 twice, a byte loop)       first or last k changed bytes new (Tear1); TearOff: whole
//
// Not explored: a value stored and overwritten between two flushes (which
// a cache eviction at the wrong moment could persist) — only media, the
// captured values and the live value are; a line torn with LineAtomic.
//
// # Concurrent workloads
//
// Goroutines the workload starts with Run.Go (threads) run one at a time
// and change turns at scheduling points, in an order the seed and the
// schedule choose, so a failure replays exactly from its printed command
// at any GOMAXPROCS:
//
//	scheduling points     persist.Store64, StoreWord and Load64 into a simulated region, Flush, streaming stores
//	                      (Copy/Set), fences, Run.Go, Run.Yield, Run.Boundary, Run.Durable, Run.Crash
//	schedules             Config.Schedules (12) full runs of the workload: in turn seeded random (a random ready
//	                      thread at every point), PCT with 1-3 priority changes spread over the run, PCT with
//	                      1-3 early changes; a workload that starts no thread runs once
//	a thread's fence      makes only that thread's flushes and streaming stores durable (SFENCE is per core);
//	                      another thread's flush of the same line writes back the whole line, words of others too
//	Go's synchronization  not a fence: on amd64 a locked instruction (Mutex.Unlock, a channel operation,
//	                      atomic.Store) orders earlier CLWBs as SFENCE does, on arm64 it does not, and braid's
//	                      code calls Drain; code that relies on it is reported as a missing fence
//	Run.Durable           the calling thread's own stores must be durable (words other threads wrote are theirs),
//	                      and every value it read with persist.Load64 that another thread stored and had not
//	                      made durable: else a persistency race, reported with both call sites
//	blocking              a thread blocked in Go's synchronization (a sync.Mutex, a channel) or spinning in
//	                      runtime.Gosched is seen in the runtime's goroutine states and the turn passes on
//	                      (never for a wait inside the simulator, nor for the runtime's own semaphores);
//	                      exact replays need threads to wait with Run.Yield (a Mutex released and taken again
//	                      between two points may go to either thread: such a failure's replay key carries
//	                      blocked=B, and a replay that then differs says so); what is stored while a blocked
//	                      thread may be running is nobody's at Run.Durable (crash images still hold it)
//	other goroutines      goroutines a structure starts itself are not scheduled: their operations count as
//	                      the thread's with the turn (one core among them, fences global as before), and a
//	                      replay that depends on their timing says so
//
// A workload that starts no thread is simulated exactly as before: one
// goroutine, whatever goroutines it starts itself act as it.
//
// # The poison model
//
// Power loss is not the only failure of real PMem: an uncorrectable media
// error poisons a range, and a load from it raises SIGBUS. The simulator
// poisons crash images the same way (persist.Region.Poison: the pages are
// made inaccessible, so loads and stores fault, at page granularity as
// Linux reports), and the structure's recovery must read them under
// persist.Guard and report persist.ErrMedia instead of dying:
//
//	call                          what is poisoned
//	Run.Poison(name, off, n)      the pages of [off, off+n) of every image taken after the call (media that
//	                              went bad); the workload's own memory stays readable
//	Image.Poison(name, off, n)    the pages of [off, off+n) of this image, now, for its check
//	Config.Poison                 a seeded random run of Poison.Pages pages inside [Off, Off+Size) of one
//	                              region (Poison.Region, or one chosen per image) of every image; the
//	                              same seed, crash point and image poison the same pages (replays agree)
//	Image.Poisoned(name)          what this image has poisoned: the check compares the structure's errors
//	                              with it
//
// The check's errors on a poisoned image say what was poisoned. Poisoning
// needs whole pages of memory: a region's Size must be a multiple of
// os.Getpagesize(). Images of regions under 1 MiB are copies in Go memory,
// larger ones copy-on-write mappings; both are protected page by page (Go
// places a buffer of whole pages on page boundaries; were one not, Poison
// would refuse its partial pages with persist.ErrUnsupported, never
// protect memory the image does not own). The poison is lifted when the
// check returns, before the image's memory is reused. An image
// whose recovery is crashed again (RecoveryCrashes) is not poisoned by
// Config.Poison, and Image.Poison turns those crashes off for its image:
// the simulator reads the image's memory to find what the recovery wrote.
// Failed syncs and full devices are persist's faults (persist.Faults, in
// Spec.Options); a simulated region in ModeMsync honours the sync hook (a
// failed sync writes nothing back).
//
// # Coverage: what every crash point checks
//
//	combinations <= MaxImages   every combination (exhaustive)
//	beyond MaxImages            nothing survived; everything survived;
//	                            every unit alone lost, alone survived, and alone at each torn or
//	                            in-flight value (whatever MaxImages says: 2+2n images and more;
//	                            a costly test may bound it with MaxAlone, and the report says so);
//	                            every two units in all four survive/lost combinations (covering array of
//	                            strength 2 in ~log2 n images; Strength 3 for every three);
//	                            every pair of units lost together while all others survived, at the first
//	                            crash point of each path (call stack and dirty-set shape) with up to Pairs
//	                            (200) units; then distinct seeded random images up to MaxImages
//	recovery crashes            at every fence the recovery issues, in the nothing-survived and the
//	                            everything-survived image of every crash point and in one image of another
//	                            class in turn (alone, covering array, pairs, random): every class
//
// Images of one crash point are never checked twice. Report.Coverage (and
// go test -v) counts the images of each class and says what was not
// covered: units left out by MaxAlone, paths with more units than Pairs,
// and crash points inside recoveries where the budget (MaxImages/4) ended
// the alone images.
//
// # Crash points
//
//	every fence                 (default) or Fences, SampleFences, PerStack
//	Run.Boundary, Run.Durable   with AtBoundaries; Durable also fails the test on data not yet durable
//	region close                with AtClose
//	end of the workload         with AtEnd (default); reported at the workload's last fence and operation
//	Run.Crash                   always
//
// SampleFences and PerStack tell fences apart by call stack and by the
// shape of their dirty set (how many words, in how many runs, over
// zeroed or old data, with writes in flight): a path taken once in a long
// workload — the wrap of a ring — is sampled first.
//
// # Reports
//
// A failure is shrunk to the fewest surviving units and reported with the
// seed, the crash point and the source line of its fence (and the first
// caller outside braid's packages), the words that survived (or, when
// most did, the ones lost), torn words marked, and a replay line:
// BRAID_CRASH_REPLAY='seq=N image=I keep=...|drop=...' go test -run ...
// checks exactly that image, once. Data not durable at Run.Durable is a
// failure with a replay line too. Redundant flushes and fences and stores
// unflushed at close are findings: reported, never failed.
//
// # Writing a crash test
//
// Write the structure against *persist.Region (all flushing and fencing
// through it, commit words with persist.Store64, offsets not pointers). The
// workload creates it on Run.Region and records, in variables it resets at
// its top, what was acknowledged and what is in flight; the check recovers
// from Image.Region and compares. The check runs synchronously inside the
// workload's fence and is also called for crashes inside its own recovery
// (Image.InRecovery): keep its state local, and do not keep the image's
// regions after it returns. A crash can come before the structure exists
// and in the middle of an operation: accept both outcomes the variables
// allow. Prove the test has teeth with a broken variant that Check reports
// (Report.Failed).
//
// # Cost
//
// Regions under 1 MiB are Go memory and their images copies; larger ones
// (Linux) live in a memfd, each image a copy-on-write mapping, and the
// kernel's page tables tell which pages the workload wrote. Recovery runs
// once per image: keep regions small and structures sized explicitly. The
// README has images/s, the cost of a crash point by region size and by
// number of dirty units, and the commands that measured them.
package crash
