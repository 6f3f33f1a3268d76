package main

import "github.com/braid-pm/braid/kv"

// kvProgress is kv's Options.Progress drawing a bar on the store flags'
// standard error (recovery at open, GC passes, checkpoints: one bar per
// step), or nil when bars are off (-progress, not a terminal).
func (f *storeFlags) kvProgress() func(kv.Progress) {
	if f.stderr == nil {
		return nil
	}
	bar := f.progress.NewBar(f.stderr)
	if bar == nil {
		return nil
	}
	cur := ""
	return func(p kv.Progress) {
		if what := p.Op + ": " + p.Step; what != cur {
			bar.Start(what, p.Total)
			cur = what
		}
		bar.Set(p.Done, p.Total)
		if p.Done >= p.Total {
			bar.Stop()
			cur = ""
		}
	}
}
