//go:build race

package fptree

// raceEnabled: the race detector slows the tests about tenfold; the
// longest ones run fewer operations under it (and say so).
const raceEnabled = true
