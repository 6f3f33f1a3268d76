#!/usr/bin/env python3
"""Independent reference for the golden files in this directory.

Written from the gensort 1.5 format description (ALGORITHMS.md 8.2 and the
published generator's behaviour), with Python big integers instead of the Go
code's 64-bit halves, so that the two implementations check each other.

usage: gensort_ref.py [-a] [-s] [-bSTART] COUNT   (prints one record per line in hex)
"""
import sys

M = 1 << 128
A = 0x2360ed051fc65da44385df649fccf645
C = 0x4a696d47726179524950202020202001
XOR = [0,
       0xF0E8E4E2E1D8D4D2D1CC000000000000, 0xCAC9C6C5C3B8B4B2B1AC000000000000,
       0xAAA9A6A5A39C9A999695000000000000, 0x938E8D8B87787472716C000000000000,
       0x6A696665635C5A595655000000000000, 0x534E4D4B473C3A393635000000000000,
       0x332E2D2B271E1D1B170F000000000000, 0xC8C4C2C1989492918CE0000000000000,
       0x170F332E2D2B271E1D1B000000000000]


def x_at(n):
    """X_n, by squaring the affine map (a, c)."""
    a, c, x = A, C, 0
    while n:
        if n & 1:
            x = (a * x + c) % M
        c = (a * c + c) % M
        a = (a * a) % M
        n >>= 1
    return x


def top10(v):
    return v.to_bytes(16, "big")[:10]


def ascii_key(y):
    hi, lo = y >> 64, y & (2**64 - 1)
    out = []
    for _ in range(8):
        out.append(32 + hi % 95); hi //= 95
    for _ in range(2):
        out.append(32 + lo % 95); lo //= 95
    return bytes(out)


def skew_index(r):
    hi, lo = r >> 64, r & (2**64 - 1)
    if hi == 0:
        if lo == 0:
            return 0
        if lo & 0xF000000000000000:
            return 64
        return lo.bit_length()
    if hi & 0xF000000000000000:
        return 128
    return 64 + hi.bit_length()


def record(r, asc, skew):
    ys = [x_at(r + 1 + k) for k in range(10)]
    y0, lo = ys[0], ys[0] & (2**64 - 1)
    if asc:
        rec = bytearray(ascii_key(y0) + b"  " + b"%032X" % r + b"  ")
        for sh in range(48, -1, -4):
            rec += (b"%X" % ((lo >> sh) & 0xF)) * 4
        rec += b"\r\n"
        if skew:
            n = (lo >> 32) & 7
            if n > 6:
                n = 0
            tab = ascii_key(x_at(skew_index(r) + 1))[:6]
            rec[:n] = tab[:n]
        return bytes(rec)
    rec = bytearray(top10(y0))
    for k in range(1, 10):
        rec += top10(ys[k] ^ XOR[k])
    if skew:
        n = (lo >> 32) & 0x3F
        if n > 48:
            n = 0
        tab = top10(x_at(skew_index(r) + 1))[:6]
        key = int.from_bytes(rec[:6], "big")
        t = int.from_bytes(tab, "big")
        mask = ((1 << n) - 1) << (48 - n)
        rec[:6] = ((key & ~mask) | (t & mask)).to_bytes(6, "big")
    return bytes(rec)


def main(argv):
    asc = skew = False
    start = 0
    args = []
    for a in argv:
        if a == "-a":
            asc = True
        elif a == "-s":
            skew = True
        elif a.startswith("-b"):
            start = int(a[2:])
        else:
            args.append(a)
    for r in range(start, start + int(args[0])):
        print(record(r, asc, skew).hex())


if __name__ == "__main__":
    main(sys.argv[1:])
