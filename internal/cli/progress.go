package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is the -progress flag: "auto" (a bar when the output is a
// terminal), "on" or "off". Its zero value is auto.
type Progress string

// ProgressUsage is the -progress flag's help.
const ProgressUsage = "progress bar on standard error: auto (on a terminal), on, off"

func (p *Progress) String() string {
	if *p == "" {
		return "auto"
	}
	return string(*p)
}

// Type is the value's name in a flag's help (pflag.Value).
func (p *Progress) Type() string { return "mode" }

func (p *Progress) Set(v string) error {
	switch v {
	case "auto", "on", "off":
		*p = Progress(v)
		return nil
	}
	return fmt.Errorf("want auto, on or off")
}

// On reports whether a bar is shown on w: on, or auto and w a terminal.
func (p Progress) On(w io.Writer) bool {
	return p == "on" || ((p == "auto" || p == "") && IsTerminal(w))
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Bar is a progress bar on a writer, or nothing (a nil *Bar, or one made
// off: every method does nothing).
type Bar struct {
	w   io.Writer
	cur *progressbar.ProgressBar
}

// NewBar is a bar on w when p is on for w, else nil.
func (p Progress) NewBar(w io.Writer) *Bar {
	if !p.On(w) {
		return nil
	}
	return &Bar{w: w}
}

// Start shows a new bar described by what, of total units, replacing the
// current one.
func (b *Bar) Start(what string, total int64) {
	if b == nil {
		return
	}
	b.Stop()
	b.cur = progressbar.NewOptions64(max(total, 1), progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(what), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
}

// Set moves the bar to done of total (total may change).
func (b *Bar) Set(done, total int64) {
	if b == nil || b.cur == nil {
		return
	}
	b.cur.ChangeMax64(max(total, 1))
	_ = b.cur.Set64(done)
}

// Stop finishes and clears the bar.
func (b *Bar) Stop() {
	if b == nil || b.cur == nil {
		return
	}
	_ = b.cur.Finish()
	b.cur = nil
}
