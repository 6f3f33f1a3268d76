// Package sort is WiscSort ([WS], papers/000): an external sorter for
// byte-addressable storage, plus the sortbenchmark tools it is measured
// with — a gensort 1.5 compatible generator and a valsort compatible
// validator.
//
// # Records
//
// Fixed-size records (Format{KeySize, ValueSize}; the sortbenchmark record
// is Gensort, 10+90 bytes) and variable-length KLV records
// key[KeySize] | value_len uint32 LE | value, ordered by memcmp of the key.
//
// # Algorithms
//
//   - OnePass: when the IndexMap (key + 5-byte pointer per record) fits the
//     memory budget: the reader pool gathers only the keys (strided reads),
//     scattering (key, pointer) entries straight into first-level radix
//     buckets; the sorter pool sorts the buckets in place (MSD radix);
//     then, one write buffer at a time, the reader pool gathers the values
//     by pointer and the writer pool persists the buffer to the output.
//   - MergePass: when it does not fit: sorted IndexMap runs are persisted
//     to run files, merged with a loser tree, and the values of each write
//     buffer's worth of merged entries are gathered in parallel.
//   - EMS: the external merge sort baseline (runs of whole records), with
//     the same pools, scheduling and radix sort, so that the gain of key-
//     value separation is measured alone.
//
// Pool sizes come from the device profile written by pmbench (PoolsFor).
// Reads and writes never overlap unless Options.Overlap is set.
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
package sort
