package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompare(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	require.NoError(t, err)
	defer f.Close()
	res, err := parse(f)
	require.NoError(t, err)
	require.Equal(t, []string{"CopyPersist/braid/64", "CopyPersist/libpmem/64", "PersistLine/braid/seq", "PersistLine/libpmem/seq",
		"Flush/braid", "Flush/libpmem", "PMDKLogAppend/64", "PMDKObjTx/16"}, res.order)
	require.Equal(t, []float64{100, 110, 90}, res.byName["CopyPersist/braid/64"].ns)
	require.Len(t, res.config, 6, "config lines once each: %q", res.config)

	var out bytes.Buffer
	write(&out, res)
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"braid-region: /dev/shm/x.pm",
		"CopyPersist/64 100 ±10% 300 ±10% 640 ±11% 213 ±9% 3.00x 3/3",
		"PersistLine/seq 200 ±0% 220 ±0% - - 1.10x 1/1",
		"Flush 15.9 ±0% 10.6 ±0% - - 0.67x 1/1",
		"PMDKLogAppend/64 680 ±0% 94.1 ±0% 1",
		"PMDKObjTx/16 2944 ±0% 5.43 ±0% 1",
	} {
		require.Contains(t, text, want, text)
	}
	require.False(t, strings.Contains(text, "noise"))
}

func TestSide(t *testing.T) {
	for in, want := range map[string][2]string{
		"CopyPersist/braid/64":    {"CopyPersist/64", "braid"},
		"CopyPersist/libpmem/64":  {"CopyPersist/64", "libpmem"},
		"Flush/libpmem":           {"Flush", "libpmem"},
		"PMDKBlkWrite/4096":       {"PMDKBlkWrite/4096", ""},
		"PersistLine/braid/rand":  {"PersistLine/rand", "braid"},
		"Other/braidish/libpmem2": {"Other/braidish/libpmem2", ""},
	} {
		k, w := side(in)
		require.Equal(t, want, [2]string{k, w}, in)
	}
}

func TestMedian(t *testing.T) {
	m, s := median([]float64{10, 12, 8, 11, 9})
	require.Equal(t, 10.0, m)
	require.InDelta(t, 20.0, s, 1e-9)
	m, _ = median(nil)
	require.Zero(t, m)
}
