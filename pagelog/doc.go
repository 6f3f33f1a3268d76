// Package pagelog propagates fixed-size pages from DRAM to persistent memory
// failure-atomically: after a crash every page is either its old or its new
// version, never a mix. It is the page-flush building block of van Renen et
// al., "Building blocks for persistent memory" (VLDB J. 2020, section 3.2):
// what a buffer manager needs to evict dirty pages to PMem. The layouts,
// the propagation methods and the measured figures are in the README.
//
// A Store lives in a persist.Region. Create formats one (page size, page
// count and slot count go into its superblock); Open recovers one. Pages
// have ids 0..Pages()-1 and start as zeros.
//
// # What is durable when
//
//	operation                  when it returns nil                 after a crash during it
//	Write(pid, page)           the new version                     the old version or the new one, whole
//	WriteLines(pid, page, m)   the same (only the lines marked     the same
//	                           in m changed; see below)
//	Create                     the empty store (zero pages)        the area as it was, no store (ErrNoStore), or the empty store
//	Open                       the recovered store                 the next Open recovers the same
//	Close()                    the micro logs' tails are recorded  the store (recovered as after a crash)
//
// Read(pid, buf) returns the last version written (acknowledged, or being
// written concurrently, whole). Open recovers after any crash, including
// one during an earlier Open: nothing acknowledged is lost, nothing torn
// is returned. Create leaves "the area as it was" only when the crash came
// before its first barrier (its mark "being created" on both copies of the
// superblock).
//
// WriteLines' precondition: the lines m leaves unmarked equal the stored
// ones. Under the invariants build tag WriteLines checks it and panics
// naming the line. Otherwise a changed line left unmarked is not written
// (micro log, Checksum layout): a store without payload checksums keeps
// the old line unseen; with them the page fails its checksum — Read of it
// is ErrCorrupt naming the precondition, Open lists it in
// Recovery().Damaged, the rest of the store works, and a Write of the page
// repairs it.
//
// # Concurrency, and the region
//
// All methods may be called from many goroutines. Page p is written on
// lane p mod Lanes() (Lanes() = Slots()-Pages(), the spare slots);
// operations on one lane serialize (writes to one page are ordered),
// different lanes run in parallel. Close waits for the operations in
// flight. Create and Open claim the store's bytes on its region until
// Close (persist.Region.Claim; a second structure on them is
// persist.ErrBusy). On a read-only region Open succeeds when recovery has
// nothing to write (a superblock copy to repair is left for the next
// writable Open) and the store serves Read and Check; writes are
// ErrReadOnly. Close the store before its region: closing the region while
// an operation runs unmaps its memory under it.
//
// # Media damage
//
// Bytes damaged after they were written (a media error, a stray write) are
// reported as errors wrapping ErrCorrupt, and so persist.ErrCorrupt, never
// returned as data — but where this table says otherwise:
//
//	what                 how it is checked                           damage that passes unseen
//	superblock           two copies, each a CRC32C; one damaged is   both copies damaged alike (CRC collision)
//	                     rewritten from the other (Recovery().Superblock)
//	slot headers         every word sealed (48 bits + CRC-16); no    a damaged word that is a codeword: any
//	(Packed, TwoWord)    page-id or version word of a valid store    other than ≤ 5 bits or 2 adjacent bytes,
//	                     is zero; Open checks what a crash can leave with probability 2^-16
//	micro logs           walog PopLogs (two header copies, CRC-32C   after a crash, damage to a log's last
//	                     per entry, the tail recorded at Close)      entry shaped like a tear (walog's doc)
//	payloads + PayloadCRC CRC32C of payload and page id; Read, Check CRC collision (2^-32)
//	                     and Open verify (not with SkipScan)
//	payloads, no PayloadCRC none                                     all: Read returns the damaged bytes
//	Checksum layout      CRC32C of payload, pid, seq; a page whose   CRC collision (2^-32)
//	                     backup holds the same version is restored
//
// A page whose payload fails its checksum is one damaged page, not a
// damaged store: Open lists it (Recovery().Damaged), Read of it is
// ErrCorrupt, Check reports it, a Write of it repairs it. Damage to the
// structure (superblock, headers, micro logs) fails Open as a whole, and
// Open writes nothing. Options.SkipScan skips Open's scan of every page
// (which reads the whole store) and leaves detection to Read.
// PayloadCRC costs a CRC32C of every page on every write and read (README),
// which is why it is not the default.
//
// # Poisoned media, failed syncs
//
// Every operation runs under persist.Guard: poisoned media is an error
// wrapping ErrCorrupt and a *persist.MediaError (persist.ErrMedia) naming
// the range, never a dead process. Read of a page on poisoned media is
// that error and every other page reads; a Write of it relocates it to its
// lane's spare slot, and the poisoned slot is never written again (the
// lane's later copy-on-write writes are refused with persist.ErrMedia).
// Open lists the pages it knows or finds unreadable in
// Recovery().Unreadable; one poisoned superblock copy is read from the
// other. A failed sync (persist.ErrSyncFailed) is final: nothing is
// written, nor acknowledged, after it. The README has the table.
//
// # Layouts
//
// The region holds, in order: the superblock area (8 KiB: the superblock
// and, 4 KiB on, its copy), the slot header table, the lanes' micro logs
// (copy-on-write layouts only), and Slots() page-sized payload slots.
//
//   - Packed (the default), copy-on-write: a page is current in one slot;
//     a write copies it into its lane's spare and fences (barrier 1), then
//     makes that slot current with one 8-byte header word holding page id,
//     version and check code (barrier 2). Versions count modulo
//     2^(47-pidBits) and never run out.
//   - TwoWord: the paper's header, page id and version in two words of one
//     line, the id stored strictly before the version: three barriers, or
//     two with Options.FenceOnly, which is safe only when cache lines are
//     written back whole (the crash simulator shows the version reaching
//     the media without the id under 8-byte atomicity). Versions only grow;
//     a page that reaches 2^47-2 of them gets ErrVersionExhausted.
//   - Micro log (WriteLines with at most Options.MicroLogLines dirty
//     lines, copy-on-write layouts): a redo entry (page, its current slot
//     and version, CRC word, mask, lines) appended to the lane's walog
//     PopLog with one barrier, then the lines stored in place without a
//     fence of their own; recovery replays the entries whose slot and
//     version are still their page's.
//   - Checksum: pages in place, each with a CRC32C; a write makes a backup
//     of the new page durable first (barrier 1), then writes in place
//     (barrier 2); recovery repairs a torn page from its backup.
//
// # Errors
//
//	error                means                                              also matches
//	ErrPageID            a page id outside [0, Pages())                      persist.ErrInvalid
//	ErrPageSize          a buffer that is not one page, a page size other    persist.ErrInvalid
//	                     than the store's
//	ErrInvalid           bad options or arguments (a mask of the wrong size) persist.ErrInvalid
//	ErrTooSmall          the region cannot hold the store                    persist.ErrTooSmall
//	ErrNoStore           the area holds nothing, or a Create did not finish  persist.ErrEmpty
//	ErrBadFormat         another kind of structure, another format version   persist.ErrBadFormat
//	ErrCorrupt           damaged persistent bytes (poisoned: also a          persist.ErrCorrupt
//	                     *persist.MediaError, or persist.ErrMedia)
//	ErrReadOnly          a write on a read-only region, or a recovery that   persist.ErrReadOnly
//	                     must write
//	ErrVersionExhausted  a TwoWord page at its last version
//	ErrClosed            an operation on a closed store                      persist.ErrClosed
//
// An operation on a store whose region was closed returns an error
// wrapping persist.ErrClosed. Nothing panics on input or on the contents
// of the region.
package pagelog
