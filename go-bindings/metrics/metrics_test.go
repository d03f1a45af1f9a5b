package metrics

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const budget = 3 << 30

func engine(t *testing.T) *cuzk.Engine {
	t.Helper()
	e, err := cuzk.NewEngine(cuzk.EngineConfig{CPUOnly: true, BudgetBytes: budget, WorkersPerDevice: 2, SynthesisThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// prove makes one proof of a small synthetic circuit on e.
func prove(t *testing.T, e *cuzk.Engine) {
	t.Helper()
	dir := t.TempDir()
	c := cuzk.Synthetic("mimc-chain", 1200)
	pce, err := cuzk.LoadPCE(c, filepath.Join(dir, "c.pce"))
	if err != nil {
		t.Fatal(err)
	}
	defer pce.Close()
	params, err := cuzk.GenerateParams(c, filepath.Join(dir, "c.params"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer params.Close()
	if _, _, err := cuzk.Prove(context.Background(), cuzk.Request{PCE: pce, Params: params, Engine: e, Seed: 2}); err != nil {
		t.Fatal(err)
	}
}

func TestEngineAndDeviceFigures(t *testing.T) {
	e := engine(t)
	prove(t, e)
	c := NewCollector(e)
	want := `
# HELP cuzk_engine_budget_bytes The engine's memory budget.
# TYPE cuzk_engine_budget_bytes gauge
cuzk_engine_budget_bytes{engine="default"} 3.221225472e+09
# HELP cuzk_engine_budget_used_bytes Budget reserved by proofs in flight.
# TYPE cuzk_engine_budget_used_bytes gauge
cuzk_engine_budget_used_bytes{engine="default"} 0
# HELP cuzk_engine_devices Devices of the engine.
# TYPE cuzk_engine_devices gauge
cuzk_engine_devices{engine="default"} 1
# HELP cuzk_engine_waiting_requests Requests waiting for budget.
# TYPE cuzk_engine_waiting_requests gauge
cuzk_engine_waiting_requests{engine="default"} 0
# HELP cuzk_engine_workers_per_device Backend workers per device.
# TYPE cuzk_engine_workers_per_device gauge
cuzk_engine_workers_per_device{engine="default"} 2
# HELP cuzk_device_proofs_total Backend stages (partition proofs) that succeeded on the device.
# TYPE cuzk_device_proofs_total counter
cuzk_device_proofs_total{backend="cpu",device="0",engine="default"} 1
# HELP cuzk_device_failures_total Backend stages (partition proofs) that failed on the device.
# TYPE cuzk_device_failures_total counter
cuzk_device_failures_total{backend="cpu",device="0",engine="default"} 0
# HELP cuzk_device_healthy 1 while the device is in rotation for automatic requests, 0 after repeated errors.
# TYPE cuzk_device_healthy gauge
cuzk_device_healthy{backend="cpu",device="0",engine="default"} 1
# HELP cuzk_device_workers_busy Workers running a backend stage on the device.
# TYPE cuzk_device_workers_busy gauge
cuzk_device_workers_busy{backend="cpu",device="0",engine="default"} 0
`
	names := []string{"cuzk_engine_budget_bytes", "cuzk_engine_budget_used_bytes", "cuzk_engine_devices",
		"cuzk_engine_waiting_requests", "cuzk_engine_workers_per_device", "cuzk_device_proofs_total",
		"cuzk_device_failures_total", "cuzk_device_healthy", "cuzk_device_workers_busy"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// The figures that vary: busy time and the peak after a proof, memory.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	got := gathered(t, reg)
	for _, name := range []string{"cuzk_device_busy_seconds_total", "cuzk_engine_budget_peak_bytes",
		"cuzk_process_resident_memory_bytes", "cuzk_process_resident_memory_peak_bytes"} {
		if got[name] <= 0 {
			t.Errorf("%s = %v", name, got[name])
		}
	}
	if _, ok := got["cuzk_device_memory_total_bytes"]; ok {
		t.Error("device memory of a CPU")
	}
	// Conventional names and units (client_golang's linter).
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
}

// gathered maps each metric name to its first sample's value.
func gathered(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		m := f.GetMetric()[0]
		switch {
		case m.GetGauge() != nil:
			out[f.GetName()] = m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			out[f.GetName()] = m.GetCounter().GetValue()
		}
	}
	return out
}

func TestMemoryByKindAndSeveralEngines(t *testing.T) {
	first, second := engine(t), engine(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(first), NewEngineCollector(second, "second"))
	if n := testutil.CollectAndCount(NewCollector(nil), "cuzk_memory_held_bytes"); n != 5 {
		t.Fatalf("%d kinds of held memory", n)
	}
	if n := testutil.CollectAndCount(NewCollector(nil)); n != 10 {
		t.Fatalf("memory alone: %d metrics", n)
	}
	if n, err := testutil.GatherAndCount(reg, "cuzk_engine_budget_bytes"); err != nil || n != 2 {
		t.Fatalf("two engines: %d, %v", n, err)
	}
	// A closed engine's figures are left out, without failing the scrape.
	second.Close()
	if n, err := testutil.GatherAndCount(reg, "cuzk_engine_budget_bytes"); err != nil || n != 1 {
		t.Fatalf("after a close: %d, %v", n, err)
	}
	if n := testutil.CollectAndCount(NewEngineCollector(second, "closed")); n != 0 {
		t.Fatalf("a closed engine: %d metrics", n)
	}
}
