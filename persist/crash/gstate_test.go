package crash

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoroutineBlocked reads goroutines of a stack dump as the watchdog
// does: only a wait for another goroutine of the program counts as
// blocked, never one on the simulator's own locks (the thread with the
// turn takes them between two scheduling points, and the watchdog holds
// them while it looks: counting those made replays under load differ).
func TestGoroutineBlocked(t *testing.T) {
	const mutexWait = `internal/sync.runtime_SemacquireMutex(0xa?, 0x40?, 0x5?)
	/usr/local/go/src/runtime/sema.go:95 +0x25
internal/sync.(*Mutex).lockSlow(0xc00028c9c8)
	/usr/local/go/src/internal/sync/mutex.go:149 +0x1f3
internal/sync.(*Mutex).Lock(0xc00028c9c8)
	/usr/local/go/src/internal/sync/mutex.go:70 +0x45
sync.(*Mutex).Lock(0x4ccb15?)
	/usr/local/go/src/sync/mutex.go:46 +0x15
`
	cases := []struct {
		name, dump string
		id         uint64
		blocked    bool
	}{
		{"the scheduler's lock", "goroutine 31113 [sync.Mutex.Lock]:\n" + mutexWait +
			"github.com/braid-pm/braid/persist/crash.(*sched).current(0xc00028c9c0)\n\t/x/sched.go:189 +0x5d\n", 31113, false},
		{"the machine's lock in Store64", "goroutine 7 [sync.Mutex.Lock]:\n" + mutexWait +
			"github.com/braid-pm/braid/persist/crash.(*simRegion).Store64(0xc000511d40, 0x0, 0xc00051d000, 0x2)\n\t/x/conc.go:113 +0xb1\n" +
			"github.com/braid-pm/braid/persist/internal/simword.Store(0xc00051d000, 0x2)\n\t/x/simword.go:90\n", 7, false},
		{"waiting for the watchdog", "goroutine 9 [chan receive]:\ngithub.com/braid-pm/braid/persist/crash.(*sched).close(...)\n\t/x/sched.go:458\n", 9, false},
		{"the program's mutex", "goroutine 12 [sync.Mutex.Lock]:\n" + mutexWait +
			"github.com/braid-pm/braid/persist/crash_test.lockReleaseWith.func1.1()\n\t/x/conc_probe_test.go:216\n" +
			"github.com/braid-pm/braid/persist/crash.(*sched).spawn.func1()\n\t/x/sched.go:170\n", 12, true},
		{"the program's channel", "goroutine 13 [chan receive, 2 minutes]:\ngithub.com/braid-pm/braid/kv.(*worker).await(0xc0)\n\t/x/combine.go:80\n", 13, true},
		{"a spin loop", "goroutine 14 [runnable]:\nruntime.Gosched()\n\t/x/proc.go:1\nmain.spin()\n\t/x/main.go:5\n", 14, true},
		{"a collection starting", "goroutine 15 [semacquire]:\nruntime.semacquire1(0x1)\n\t/x/sema.go:1\nruntime.gcStart(0x1)\n\t/x/mgc.go:1\nruntime.mallocgc(0x10)\n\t/x/malloc.go:1\nmain.alloc()\n\t/x/main.go:5\n", 15, false},
		{"a semaphore of sync", "goroutine 16 [semacquire]:\nsync.runtime_Semacquire(0x1)\n\t/x/sema.go:1\nmain.wait()\n\t/x/main.go:5\n", 16, true},
		{"running", "goroutine 17 [running]:\n\tgoroutine running on other thread; stack unavailable\n", 17, false},
		{"sleeping", "goroutine 18 [sleep]:\ntime.Sleep(0x1)\n\t/x/time.go:1\nmain.nap()\n\t/x/main.go:5\n", 18, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, st, ok := parseGoroutine([]byte(c.dump))
			require.True(t, ok)
			require.Equal(t, c.id, id)
			require.Equal(t, c.blocked, st.blocked(), "%+v", st)
		})
	}
	_, _, ok := parseGoroutine([]byte("not a goroutine"))
	require.False(t, ok)
}
