package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is the progress line on stderr: shown only when stderr is a
// terminal, cleared when the run ends, so it never gets into a redirected
// report or log.
type progress struct {
	w       *os.File // nil: no progress line
	bar     *progressbar.ProgressBar
	pending bool // a step is running and not yet counted
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{w: f}
}

// add announces n more steps.
func (p *progress) add(n int) {
	switch {
	case p.w == nil:
	case p.bar == nil:
		p.bar = progressbar.NewOptions(n,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionShowDescriptionAtLineEnd(),
		)
	default:
		p.bar.AddMax(n)
	}
}

// step counts the step before and shows what runs now.
func (p *progress) step(desc string) {
	if p.bar == nil {
		return
	}
	if p.pending {
		p.bar.Add(1)
	}
	p.pending = true
	p.bar.Describe(desc)
}

// finish removes the line.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	p.bar.Finish()
	p.bar.Clear()
	p.bar = nil
}
