// Package sort is WiscSort ([WS]: V. Banakar et al., "WiscSort: External
// Sorting For Byte-Addressable Storage", PVLDB 16(9), 2023): an external
// sorter for byte-addressable storage. The sortbenchmark tools it is
// measured with — a gensort 1.5 compatible generator and a valsort
// compatible validator — are package sort/sortbench.
//
// # Records
//
// Fixed-size records (Format{KeySize, ValueSize}; the sortbenchmark record
// is Gensort, 10+90 bytes) and variable-length KLV records
// key[KeySize] | value_len uint32 LE | value, ordered by memcmp of the key.
// The format is package sort/record's (Format is record.Format), shared
// with sort/sortbench.
//
// # Algorithms
//
//   - OnePass: when the IndexMap (key + 5-byte pointer per record) fits the
//     memory budget: the reader pool gathers only the keys (strided reads)
//     and counts their first radix digit; the entries are scattered into
//     first-level buckets and the sorter pool sorts the buckets (MSD
//     radix); then, one write buffer at a time, the reader pool gathers
//     the values by pointer — bucketed by their place in the input, each
//     reader on its own part of it — and the writer pool persists the
//     buffer to the output.
//   - MergePass: when it does not fit: sorted IndexMap runs are persisted
//     to run files (entries packed, 15 bytes for gensort), merged with a
//     loser tree, and the values of each write buffer's worth of merged
//     entries are gathered in parallel.
//   - EMS: the external merge sort baseline (runs of whole records), with
//     the same pools, scheduling, radix sort, merge tree and write path, so
//     that the gain of key-value separation is measured alone.
//
// In DRAM an IndexMap entry is held in machine words (two for gensort:
// the key bits, then the pointer in the low bits), so that comparisons are
// integer compares and entries move as registers; on storage it is packed.
//
// Pool sizes come from the device profile written by pmbench (PoolsFor).
// Reads and writes never overlap unless Options.Overlap is set.
//
// # Memory
//
// Options.MemBudget bounds every DRAM buffer the sorter allocates; they
// are mapped outside the Go heap, carved per phase (the IndexMap's
// neighbour is the key pass's scratch first, then the write buffer) and
// kept by a Sorter from one sort to the next.
//
// # Durability and failure
//
// The output and the run files are mapped with package persist and written
// with Region.Copy (streaming stores, then a fence; msync on a non-DAX
// file): when Sort returns nil the whole output is durable under its final
// name. The output is written under a temporary name in the same directory
// and renamed only when complete; on any error or cancellation Sort removes
// the temporary output and every run file, so a partial output never
// appears under the final name. Bad input (a size that is not a multiple of
// the record size, a truncated KLV record, an empty file) is reported with
// ErrBadFormat or ErrEmpty before the output is created. A run file whose
// header does not check out is ErrCorrupt, which wraps persist.ErrCorrupt.
// Every read and write of a mapped file runs under persist.Guard: an input,
// run file or output that another program truncates during the work is an
// ErrChanged error ("IN changed size during the sort") wrapping the
// *persist.MediaError of the fault, and the sort cleans up as on any
// error.
package sort
