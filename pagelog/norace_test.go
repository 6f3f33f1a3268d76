//go:build !race

package pagelog_test

const raceEnabled = false
