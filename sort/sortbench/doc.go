// Package sortbench is the sortbenchmark tools braid's sorter is measured
// with: a gensort 1.5 compatible generator (Generate, GenerateBytes,
// GenerateTo; gensort's binary, ASCII and skewed records, and other fixed
// sizes and KLV records of package sort/record as an extension) and a
// valsort compatible validator (Validate, ValidateBytes, ValidateReader:
// order, record count, duplicate keys and the 128-bit checksum, as a
// Summary that can be written, read and combined as valsort's -o and -s
// do). Uint128 is the 128-bit arithmetic of gensort's generator and of the
// checksums.
//
// Generate writes a file in parallel, straight into its mapping (package
// persist, streaming stores), under a temporary name renamed when
// complete; it checks the size of what it is asked for (against an int64
// and the file system's free space, ErrNoSpace) before generating
// anything. Validate maps the file and checks it in parallel; a file that
// another program truncates meanwhile is ErrChanged, a poisoned range a
// *persist.MediaError naming the file and the offset. Their sentinels are
// package sort's (sortbench.ErrNoSpace is sort.ErrNoSpace).
//
// Command pmsort's gen and validate subcommands are these functions.
package sortbench
