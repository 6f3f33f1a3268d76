// Package sortio is the file machinery that the sorter (package sort) and
// the sortbenchmark tools (sort/sortbench) share: files mapped with
// persist and written with streaming stores (Mapped), the pools that work
// on them under persist.Guard (ParallelChunks), the explanation of a fault
// in one of them (ExplainFault: a poisoned range located in its file, or a
// file that changed size), the errors both packages return (their
// sentinels are these), and the Linux calls behind them.
package sortio
