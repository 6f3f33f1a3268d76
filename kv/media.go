package kv

// media is where a store keeps its segments and its checkpoints: the
// device directories and CheckpointDir, or (tests) simulated regions and
// an in-memory directory.
type media interface{}
