// Shared by the streaming copy (copy_amd64.s) and fill (fill_amd64.s)
// routines. Registers: DI the destination, SI the source (copy), CX the
// bytes left, AX the fill word or a copied word. Each routine stores bytes
// until DI is 8-byte aligned, 8-byte MOVNTIs until it is aligned to the
// vector width, then vectors of 8 (SSE2, AVX2) or 4 (AVX-512) registers,
// single vectors, 8-byte MOVNTIs and bytes.

// COPY_HEAD(mask, head, align, vec, tail, done) aligns DI for a copy: byte
// moves to an 8-byte boundary (done when CX runs out), then 8-byte MOVNTIs
// until DI&mask is 0 (then vec), or to tail when fewer than 8 bytes are
// left.
#define COPY_HEAD(mask, head, align, vec, tail, done) \
head: \
	TESTQ $7, DI; \
	JZ align; \
	MOVBQZX (SI), AX; \
	MOVB AX, (DI); \
	INCQ SI; \
	INCQ DI; \
	DECQ CX; \
	JNZ head; \
	JMP done; \
align: \
	TESTQ $mask, DI; \
	JZ vec; \
	CMPQ CX, $8; \
	JB tail; \
	MOVQ (SI), AX; \
	MOVNTIQ AX, (DI); \
	ADDQ $8, SI; \
	ADDQ $8, DI; \
	SUBQ $8, CX; \
	JMP align

// COPY_VEC1(W, MOV, NT, R, vec1, words) copies single vectors of W bytes
// (MOV loads into R, NT streams it) while W bytes are left, then goes to
// words.
#define COPY_VEC1(W, MOV, NT, R, vec1, words) \
vec1: \
	CMPQ CX, $W; \
	JB words; \
	MOV (SI), R; \
	NT R, (DI); \
	ADDQ $W, SI; \
	ADDQ $W, DI; \
	SUBQ $W, CX; \
	JMP vec1

// COPY_TAIL(wordloop, tail, done, ret) copies the last bytes: 8-byte
// MOVNTIs, then byte moves; then an SFENCE when the fence argument is set.
#define COPY_TAIL(wordloop, tail, done, ret) \
wordloop: \
	CMPQ CX, $8; \
	JB tail; \
	MOVQ (SI), AX; \
	MOVNTIQ AX, (DI); \
	ADDQ $8, SI; \
	ADDQ $8, DI; \
	SUBQ $8, CX; \
	JMP wordloop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVBQZX (SI), AX; \
	MOVB AX, (DI); \
	INCQ SI; \
	INCQ DI; \
	DECQ CX; \
	JMP tail; \
done: \
	CMPB fence+24(FP), $0; \
	JEQ ret; \
	SFENCE; \
ret: \
	RET

// FILL_HEAD(mask, head, align, vec, tail, done) is COPY_HEAD for a fill
// of the byte in AX's every byte: it returns when CX runs out in the byte
// loop.
#define FILL_HEAD(mask, head, align, vec, tail, done) \
	MOVQ $0x0101010101010101, BX; \
	IMULQ BX, AX; \
	TESTQ CX, CX; \
	JLE done; \
head: \
	TESTQ $7, DI; \
	JZ align; \
	MOVB AX, (DI); \
	INCQ DI; \
	DECQ CX; \
	JNZ head; \
	RET; \
align: \
	TESTQ $mask, DI; \
	JZ vec; \
	CMPQ CX, $8; \
	JB tail; \
	MOVNTIQ AX, (DI); \
	ADDQ $8, DI; \
	SUBQ $8, CX; \
	JMP align

// FILL_VEC1(W, NT, R, vec1, words) is COPY_VEC1 for a fill from register
// R.
#define FILL_VEC1(W, NT, R, vec1, words) \
vec1: \
	CMPQ CX, $W; \
	JB words; \
	NT R, (DI); \
	ADDQ $W, DI; \
	SUBQ $W, CX; \
	JMP vec1

// FILL_TAIL(wordloop, tail, done) is COPY_TAIL for a fill (no fence).
#define FILL_TAIL(wordloop, tail, done) \
wordloop: \
	CMPQ CX, $8; \
	JB tail; \
	MOVNTIQ AX, (DI); \
	ADDQ $8, DI; \
	SUBQ $8, CX; \
	JMP wordloop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVB AX, (DI); \
	INCQ DI; \
	DECQ CX; \
	JMP tail; \
done: \
	RET

// PAGE_AHEAD(nopf): at each new destination page that the range goes
// past, touch the next one, so that its page walk overlaps this page's
// stores (PREFETCH never faults). Not past the range: the next page is not
// ours to touch, and on sequential copies of a page or less it was a read
// of the line the next call then streams over.
#define PAGE_AHEAD(nopf) \
	TESTQ $4095, DI; \
	JNZ nopf; \
	CMPQ CX, $4096; \
	JBE nopf; \
	PREFETCHT0 4096(DI); \
nopf:
