package cli

import "strings"

// Exits says what the exit statuses (the package's rule) mean for one
// command; Text builds the "Exit status:" list its -h ends with, so that
// the rule is worded once, here, and each command adds only its own
// meanings.
type Exits struct {
	Help     string // how help is asked for: "-h and help" (empty: "-h")
	Fail     string // what "the work failed" (1) covers
	Usage    string // what "the command line is wrong" (2) covers: "found before ...: ..."
	Internal string // what a bug (3) leaves: "partial output is removed"
	Hangup   string // 129, after "hung up (SIGHUP: the terminal was closed)"
	Signal   string // 130, after "interrupted (SIGINT, SIGTERM)"
	Pipe     string // 141, after "the reader of the output went away (SIGPIPE"
	After    string // a paragraph after the list
}

// Text is the list, for the command called name ("" when e is empty).
func (e Exits) Text(name string) string {
	if e == (Exits{}) {
		return ""
	}
	help := e.Help
	if help == "" {
		help = "-h"
	}
	var b strings.Builder
	b.WriteString("Exit status:\n")
	item := func(code, text string) {
		b.WriteString("  " + code + strings.Repeat(" ", 5-len(code)) + wrap(text, 7, 72))
		b.WriteByte('\n')
	}
	item("0", "success (also "+help+")")
	item("1", joinText("the work failed", e.Fail, ": "))
	item("2", joinText("the command line is wrong", e.Usage, ", "))
	item("3", joinText("an internal error: a bug in "+name+", reported with its stack (please report it)", e.Internal, "; "))
	item("129", joinText("hung up (SIGHUP: the terminal was closed)", e.Hangup, "; "))
	item("130", joinText("interrupted (SIGINT, SIGTERM)", e.Signal, "; "))
	item("141", "the reader of the output went away (SIGPIPE"+e.Pipe+"), quietly")
	if e.After != "" {
		b.WriteString("  " + wrap(e.After, 2, 72))
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func joinText(head, tail, sep string) string {
	if tail == "" {
		return head
	}
	return head + sep + tail
}

// wrap breaks text into lines of at most width columns at spaces, each
// line after the first starting with indent spaces (so does none: the
// caller writes the first line's prefix).
func wrap(text string, indent, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case line+1+len(w) > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			line = indent
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
