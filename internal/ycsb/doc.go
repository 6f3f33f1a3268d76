// Package ycsb is braid's YCSB driver: the core workloads (load, A-F) of
// the Yahoo! Cloud Serving Benchmark, written from YCSB's definitions
// (CoreWorkload and the site.ycsb.generator classes), over any engine that
// implements DB. pmkv bench runs it on package kv; bench/kvpeers runs it
// on kv and Go's stores side by side.
//
// What it follows, as YCSB does:
//
//   - Keys are "user" + FNVHash64(key number) (insertorder=hashed, the
//     default) or "user" + the number (ordered), zero-padded as
//     zeropadding says (default 1: none). Record 0 is
//     user6284781860667377211, as in every YCSB load.
//   - The load phase inserts key numbers 0..Records-1; a run's inserts take
//     the numbers after them (transactioninsertkeysequence) and become
//     readable once acknowledged (AcknowledgedCounterGenerator: reads only
//     pick keys at or below the highest number whose inserts all returned).
//   - Request distributions: uniform over the loaded keys; zipfian is
//     ScrambledZipfianGenerator (constant 0.99 over 10^10 items, zeta
//     26.46902820178302, hashed into [0, records + 2 x expected inserts]);
//     latest is SkewedLatestGenerator (last acknowledged - zipfian).
//   - Workloads A-F have the operation mixes of workloads/workloada-f; E's
//     scans are uniform in 1..100 records; F's read-modify-write is timed
//     as READ-MODIFY-WRITE and its read and update also as READ and UPDATE.
//   - Latencies go to HdrHistograms of nanoseconds (3 significant
//     digits), one per client and operation type, merged at the end.
//
// Data integrity (Config.Verify) goes further than YCSB's dataintegrity,
// whose field values are derived from the key alone: each value carries
// its version and key number (16 bytes) and bytes derived from both, and
// the driver tracks, per key, the last version handed out and the highest
// acknowledged. A read is correct when it returns exactly the bytes of a
// version it may see (not older than one acknowledged before the read
// started, not newer than one handed out before it ended), wrong
// otherwise (other bytes, another key's value, a lost acknowledged
// update), missing when an acknowledged key is not found. With Verify,
// the writes of one key are serialized (overlapping puts of a key may
// take effect in either order); scanned records are checked against their
// own key and bytes, not for staleness.
package ycsb
