// Package metrics exports cuzk's figures as Prometheus metrics: an engine's
// budget and queue (Engine.Stats), what each of its devices has done
// (Engine.Devices) and the process's memory as the library counts it
// (cuzk.MemStats), read at each scrape.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(metrics.NewCollector(engine))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The memory figures are the process's: register one collector with them
// per registry (NewCollector(nil) alone, or the first engine's collector),
// and NewEngineCollector for each further engine, with its own "engine"
// label value.
package metrics

import (
	"errors"
	"strconv"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
	"github.com/prometheus/client_golang/prometheus"
)

func desc(name, help string, constLabels prometheus.Labels, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("cuzk_"+name, help, labels, constLabels)
}

// engineDescs are one engine's metrics, labelled with its name.
type engineDescs struct {
	budgetBytes, budgetUsed, budgetPeak, waiting, workers, devices *prometheus.Desc
	inUse, healthy, proofs, failures, busy, vramFree, vramTotal    *prometheus.Desc
}

func newEngineDescs(name string) *engineDescs {
	e := prometheus.Labels{"engine": name}
	dev := []string{"backend", "device"}
	return &engineDescs{
		budgetBytes: desc("engine_budget_bytes", "The engine's memory budget.", e),
		budgetUsed:  desc("engine_budget_used_bytes", "Budget reserved by proofs in flight.", e),
		budgetPeak: desc("engine_budget_peak_bytes",
			"The most budget ever reserved at once, the buffers kept for the next proofs included.", e),
		waiting: desc("engine_waiting_requests", "Requests waiting for budget.", e),
		workers: desc("engine_workers_per_device", "Backend workers per device.", e),
		devices: desc("engine_devices", "Devices of the engine.", e),

		inUse: desc("device_workers_busy", "Workers running a backend stage on the device.", e, dev...),
		healthy: desc("device_healthy",
			"1 while the device is in rotation for automatic requests, 0 after repeated errors.", e, dev...),
		proofs:    desc("device_proofs_total", "Backend stages (partition proofs) that succeeded on the device.", e, dev...),
		failures:  desc("device_failures_total", "Backend stages (partition proofs) that failed on the device.", e, dev...),
		busy:      desc("device_busy_seconds_total", "Seconds with at least one backend stage running.", e, dev...),
		vramFree:  desc("device_memory_free_bytes", "Free device memory (GPUs only).", e, dev...),
		vramTotal: desc("device_memory_total_bytes", "Device memory (GPUs only).", e, dev...),
	}
}

func (d *engineDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.budgetBytes, d.budgetUsed, d.budgetPeak, d.waiting, d.workers, d.devices,
		d.inUse, d.healthy, d.proofs, d.failures, d.busy, d.vramFree, d.vramTotal}
}

// The process's memory.
var (
	rss      = desc("process_resident_memory_bytes", "Resident set size (VmRSS).", nil)
	peakRSS  = desc("process_resident_memory_peak_bytes", "Peak resident set size since start or the last reset (VmHWM).", nil)
	rssAnon  = desc("process_resident_anonymous_memory_bytes", "Resident anonymous memory (RssAnon).", nil)
	rssFile  = desc("process_resident_file_memory_bytes", "Resident file-backed memory (RssFile).", nil)
	held     = desc("memory_held_bytes", "Host memory the library holds, by what holds it.", nil, "kind")
	gpuBytes = desc("gpu_memory_used_bytes", "Device memory the library uses on all GPUs together.", nil)
	memDescs = []*prometheus.Desc{rss, peakRSS, rssAnon, rssFile, held, gpuBytes}
)

// Collector is a prometheus.Collector of cuzk's figures. It reads them at
// each scrape; several scrapes may run at once.
type Collector struct {
	engine *cuzk.Engine // nil: no engine metrics
	descs  *engineDescs
	memory bool
}

// NewCollector collects the process's memory figures and, unless engine is
// nil, the engine's, labelled engine="default".
func NewCollector(engine *cuzk.Engine) *Collector {
	return &Collector{engine: engine, descs: newEngineDescs("default"), memory: true}
}

// NewEngineCollector collects only the engine's figures, labelled
// engine=name: for each engine beyond the first.
func NewEngineCollector(engine *cuzk.Engine, name string) *Collector {
	return &Collector{engine: engine, descs: newEngineDescs(name)}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if c.engine != nil {
		for _, d := range c.descs.all() {
			ch <- d
		}
	}
	if c.memory {
		for _, d := range memDescs {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector. A closed engine's figures are
// left out; a failure to read them fails the scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if c.engine != nil {
		c.collectEngine(ch)
	}
	if c.memory {
		collectMemory(ch)
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func (c *Collector) collectEngine(ch chan<- prometheus.Metric) {
	d := c.descs
	st, err := c.engine.Stats()
	if err == nil {
		ch <- gauge(d.budgetBytes, float64(st.BudgetBytes))
		ch <- gauge(d.budgetUsed, float64(st.BudgetUsed))
		ch <- gauge(d.budgetPeak, float64(st.BudgetPeak))
		ch <- gauge(d.waiting, float64(st.Waiting))
		ch <- gauge(d.workers, float64(st.WorkersPerDevice))
		ch <- gauge(d.devices, float64(st.NumDevices))
	}
	perDevice, derr := c.engine.Devices()
	if err == nil {
		err = derr
	}
	if errors.Is(err, cuzk.ErrClosed) {
		return
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(d.budgetBytes, err)
		return
	}
	for _, dev := range perDevice {
		backend := "cpu"
		if dev.Backend == ccuzk.BackendCUDA {
			backend = "cuda"
		}
		l := []string{backend, strconv.FormatUint(uint64(dev.Device), 10)}
		ok := 0.0
		if dev.Healthy {
			ok = 1
		}
		ch <- gauge(d.inUse, float64(dev.InUse), l...)
		ch <- gauge(d.healthy, ok, l...)
		ch <- counter(d.proofs, float64(dev.Proofs), l...)
		ch <- counter(d.failures, float64(dev.Failures), l...)
		ch <- counter(d.busy, dev.BusySeconds, l...)
		if backend == "cuda" {
			ch <- gauge(d.vramFree, float64(dev.VramFree), l...)
			ch <- gauge(d.vramTotal, float64(dev.VramTotal), l...)
		}
	}
}

func collectMemory(ch chan<- prometheus.Metric) {
	m, err := cuzk.MemStats()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(rss, err)
		return
	}
	ch <- gauge(rss, float64(m.RssBytes))
	ch <- gauge(peakRSS, float64(m.PeakRssBytes))
	ch <- gauge(rssAnon, float64(m.RssAnonBytes))
	ch <- gauge(rssFile, float64(m.RssFileBytes))
	for _, k := range []struct {
		kind  string
		bytes uint64
	}{
		{"pce", m.PceBytes}, {"pce_mapped", m.PceMappedBytes}, {"srs", m.SrsBytes},
		{"witness", m.WitnessBytes}, {"abc", m.AbcBytes},
	} {
		ch <- gauge(held, float64(k.bytes), k.kind)
	}
	ch <- gauge(gpuBytes, float64(m.GpuBytes))
}
