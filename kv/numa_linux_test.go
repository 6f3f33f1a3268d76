package kv

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/numa"
)

// TestTableBoundToNode: a mapped slot array asked to live on a node is
// bound there (mbind) where the kernel allows it, and the page is on it.
func TestTableBoundToNode(t *testing.T) {
	topo, err := numa.Read("")
	require.NoError(t, err)
	node := topo.Nodes[0].ID
	tb := table{bind: true, node: node}
	tb.resize(hugeSlots)
	if !tb.mem.boundTo(node) {
		t.Skipf("the kernel refused mbind to node %d", node)
	}
	mem := tb.mem.mem
	mem[0] = 1
	got, err := numa.PageNode(mem)
	require.NoError(t, err)
	require.Equal(t, node, got)
	var unbound table
	unbound.resize(hugeSlots)
	require.False(t, unbound.mem.boundTo(node), "no bind asked")
	tb.mem.free()
	unbound.mem.free()
}
