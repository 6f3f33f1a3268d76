package sortio

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/persist"
)

// ParallelChunks runs fn(0..n-1) on up to threads goroutines, handing out
// indices in order; it stops early on the first error or on cancellation.
//
// Every goroutine runs under persist.Guard: the tasks read and write
// mapped files that another program may truncate, and a fault there is a
// *persist.MediaError (which ExplainFault explains), not a dead process. A
// task's panic is re-raised on the calling goroutine, with the task's
// stack, where the caller (or a command's recover) sees it.
func ParallelChunks(ctx context.Context, threads, n int, fn func(i int) error) error {
	if threads > n {
		threads = n
	}
	if threads <= 1 {
		return persist.Guard(func() error {
			for i := 0; i < n; i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := fn(i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		firstE  error
		stop    atomic.Bool
		panics  taskPanics
	)
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.catch()
			err := persist.Guard(func() error {
				for !stop.Load() {
					i := int(next.Add(1) - 1)
					if i >= n {
						return nil
					}
					err := ctx.Err()
					if err == nil {
						err = fn(i)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				errOnce.Do(func() { firstE = err })
				stop.Store(true)
			}
		}()
	}
	wg.Wait()
	panics.raise()
	return firstE
}

// taskPanics carries the first panic of a pool's goroutines to the
// goroutine that waits for them.
type taskPanics struct {
	once  sync.Once
	value any
	stack []byte
	set   atomic.Bool
}

// catch is deferred by a pool goroutine: it records a panic (the first
// one) instead of letting it kill the process from a goroutine no one can
// recover.
func (p *taskPanics) catch() {
	if v := recover(); v != nil {
		p.once.Do(func() {
			p.value, p.stack = v, debug.Stack()
			p.set.Store(true)
		})
	}
}

// raise re-panics on the waiting goroutine with the recorded panic.
func (p *taskPanics) raise() {
	if p.set.Load() {
		panic(&taskPanic{value: p.value, stack: p.stack})
	}
}

// taskPanic is the panic of one of the sorter's worker goroutines, raised
// again on the goroutine that called into the package (so that a caller
// can recover it), with the worker's stack. It is a bug in braid.
type taskPanic struct {
	value any
	stack []byte
}

func (p *taskPanic) Error() string {
	return fmt.Sprintf("sort: panic in a worker goroutine: %v\n\n%s", p.value, p.stack)
}
