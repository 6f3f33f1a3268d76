package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/internal/cli"
)

// The paths of a command line are checked before any work starts, so that
// a path that cannot be used as given is bad usage (exit status 2) with a
// message naming the flag, not a failure found after minutes of work
// (exit status 1). The sort package checks again when it opens them (a
// file can change in between); a failure there is exit status 1.

// checkInputPath: path (named by what, e.g. "-i " or "-perm ") exists, is not
// a directory and, when it is a regular file, can be opened for reading.
// With regular, anything but a regular file is refused (sort maps its
// input; a pipe is read only by validate).
func checkInputPath(what, path string, regular bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return usagef("%s%s: %v", what, path, pathErr(err))
	}
	switch {
	case st.IsDir():
		return usagef("%s%s is a directory; give a file name", what, path)
	case !st.Mode().IsRegular():
		if regular {
			return usagef("%s%s is %s, not a regular file: pmsort sort maps its input, which needs a regular file; write the stream to a file first", what, path, fileKind(st.Mode()))
		}
		// A device or a pipe: opening it could block; the work reports it.
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return usagef("%s%s: %v", what, path, pathErr(err))
	}
	f.Close()
	return nil
}

// checkOutputPath: path (named by what) is not a directory nor an existing
// file other than a regular one, exists only when replace allows it, and
// its directory exists and is writable.
func checkOutputPath(what, path string, replace bool, hint string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return usagef("%s%s is a directory; give a file name", what, path)
	case err == nil && !st.Mode().IsRegular():
		return usagef("%s%s exists and is %s, not a regular file: the output is written under a temporary name beside it and renamed when complete; give a file name (and read the file from there)",
			what, path, fileKind(st.Mode()))
	case err == nil && !replace:
		return usagef("%s%s exists (%s)", what, path, hint)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return usagef("%s%s: %v", what, path, pathErr(err))
	}
	return checkDirPath(what+path+": directory ", filepath.Dir(path))
}

// checkDirPath: dir (named by what) exists, is a directory, and files can be
// created in it (tried: permission bits do not tell for root or a
// read-only mount).
func checkDirPath(what, dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return usagef("%s%s: %v", what, dir, pathErr(err))
	}
	if !st.IsDir() {
		return usagef("%s%s is not a directory", what, dir)
	}
	f, err := os.CreateTemp(dir, ".pmsort-probe-*")
	if err != nil {
		return usagef("%s%s: cannot create files there: %v", what, dir, pathErr(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkNotInput refuses an output path that names the input file (by
// path, or as the same file through a link).
func checkNotInput(what, out, in string) error {
	ao, err1 := filepath.Abs(out)
	ai, err2 := filepath.Abs(in)
	if err1 == nil && err2 == nil && ao == ai {
		return usagef("%s%s is the input", what, out)
	}
	so, err := os.Stat(out)
	if err != nil {
		return nil // does not exist (yet): cannot be the input
	}
	if si, err := os.Stat(in); err == nil && os.SameFile(so, si) {
		return usagef("%s%s is the input %s (the same file)", what, out, in)
	}
	return nil
}

// pathErr and fileKind are cli's, shared by braid's commands.
func pathErr(err error) error { return cli.PathErr(err) }

func fileKind(m fs.FileMode) string { return cli.FileKind(m) }
