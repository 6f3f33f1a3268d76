package server

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics exports a server's statistics to Prometheus: command counts
// and latency histograms, connections, and the store's counters (kv's
// and expiry's), read at each scrape.
type Metrics struct {
	reg     *prometheus.Registry
	latency *prometheus.HistogramVec
}

// NewMetrics returns the collectors of sv (call it before sv.Serve);
// Handler serves them.
func NewMetrics(sv *Server) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pmkv_command_duration_seconds",
		Help:    "Time to run a command (its reply written to the connection's buffer; a write's includes its durable commit).",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
	}, []string{"cmd"})
	m.reg.MustRegister(m.latency, collector{sv}, collectors.NewGoCollector())
	for name, st := range sv.stats.cmds { // before Serve: nothing runs yet
		st.observe = m.latency.WithLabelValues(name).Observe
	}
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// collector reads the counters at each scrape.
type collector struct{ sv *Server }

var (
	descCmds = prometheus.NewDesc("pmkv_commands_total", "Commands run, by command.", []string{"cmd"}, nil)
	descs    = map[string]*prometheus.Desc{}
	descsMu  sync.Mutex
)

func desc(name, help string) *prometheus.Desc {
	descsMu.Lock()
	defer descsMu.Unlock()
	d, ok := descs[name]
	if !ok {
		d = prometheus.NewDesc(name, help, nil, nil)
		descs[name] = d
	}
	return d
}

func (c collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	sv := c.sv
	for name, st := range sv.stats.cmds {
		ch <- prometheus.MustNewConstMetric(descCmds, prometheus.CounterValue, float64(st.calls.Load()), name)
	}
	sv.mu.Lock()
	clients := len(sv.conns)
	sv.mu.Unlock()
	counter := func(name, help string, v float64) {
		ch <- prometheus.MustNewConstMetric(desc(name, help), prometheus.CounterValue, v)
	}
	gauge := func(name, help string, v float64) {
		ch <- prometheus.MustNewConstMetric(desc(name, help), prometheus.GaugeValue, v)
	}
	s := &sv.stats
	gauge("pmkv_connected_clients", "Clients connected now.", float64(clients))
	counter("pmkv_connections_total", "Clients accepted.", float64(s.connections.Load()))
	counter("pmkv_rejected_connections_total", "Clients refused (maxclients, protected mode).", float64(s.rejected.Load()))
	counter("pmkv_security_attacks_total", "Connections dropped for a POST or Host: line.", float64(s.attacks.Load()))
	counter("pmkv_protocol_errors_total", "Connections closed for a framing error.", float64(s.protocolErrors.Load()))
	counter("pmkv_error_replies_total", "Error replies.", float64(s.errors.Load()))
	counter("pmkv_keyspace_hits_total", "GETs that found their key.", float64(s.hits.Load()))
	counter("pmkv_keyspace_misses_total", "GETs that did not.", float64(s.misses.Load()))
	st := sv.b.Stats()
	gauge("kv_keys", "Live keys.", float64(st.Keys))
	gauge("kv_keys_with_deadline", "Live keys with a deadline.", float64(st.Expires))
	counter("kv_expired_keys_total", "Keys dropped at their deadline.", float64(st.Expired))
	counter("kv_puts_total", "Puts completed.", float64(st.Puts))
	counter("kv_gets_total", "Gets completed.", float64(st.Gets))
	counter("kv_deletes_total", "Deletes completed.", float64(st.Deletes))
	counter("kv_batches_total", "Batches written.", float64(st.Batches))
	counter("kv_fences_total", "Fences issued.", float64(st.Fences))
	counter("kv_appended_bytes_total", "Log bytes appended.", float64(st.AppendedBytes))
	counter("kv_media_bytes_total", "Bytes streamed to media.", float64(st.MediaBytes))
	counter("kv_gc_passes_total", "Cleaning passes.", float64(st.GCPasses))
	counter("kv_gc_moved_total", "Entries the cleaner moved.", float64(st.GCMoved))
	counter("kv_segments_freed_total", "Segments the cleaner freed.", float64(st.SegmentsFreed))
	counter("kv_checkpoints_total", "Checkpoints written.", float64(st.Checkpoints))
	counter("kv_room_waits_total", "Writes that waited for a free segment.", float64(st.RoomWaits))
	gauge("kv_live_bytes", "Media bytes of the latest versions.", float64(st.LiveBytes))
	gauge("kv_allocated_bytes", "Bytes of the segments in use.", float64(st.AllocatedBytes))
	segs := 0
	for _, d := range st.Devices {
		segs += d.Segments
	}
	gauge("kv_segments", "Segment files.", float64(segs))
	if amp, ok := spaceAmp(st); ok {
		gauge("kv_space_amplification", "Allocated bytes per live byte (once the live data fills a segment).", amp)
	}
	if r := st.Recovery; r != nil {
		gauge("kv_recovery_seconds", "Time the last open took to recover.", r.Total.Seconds())
		gauge("kv_recovery_entries", "Metadata entries the last open replayed.", float64(r.Entries))
		gauge("kv_recovery_torn_entries", "Entries dropped at torn tails by the last open.", float64(r.TornEntries))
		gauge("kv_recovery_corrupt_values", "Entries dropped by the last open: value failed its checksum.", float64(r.CorruptValues))
	}
}
