//go:build !race

package fptree

const raceEnabled = false
