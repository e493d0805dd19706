// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"errors"
	"syscall"
	"testing"
)

func TestListEventsWalksAndStops(t *testing.T) {
	c := newContext(t, nil)
	var names []string
	if err := c.ListEvents(func(name, desc string) bool {
		names = append(names, name)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(names) < 2 {
		t.Fatalf("%d events listed", len(names))
	}
	seen := 0
	if err := c.ListEvents(func(name, desc string) bool {
		seen++
		return seen < 2
	}); err != nil || seen != 2 {
		t.Errorf("stopping at the second: %d seen, %v", seen, err)
	}
	// libpfm4 lists some events it cannot encode on this machine
	// (uncore events of a PMU the kernel does not expose: "not
	// supported"), so each listed name encodes or gives EINVAL.
	encoded := 0
	for _, name := range names {
		_, err := c.EventAttr(name)
		if err == nil {
			encoded++
		} else if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("listed event %s: %v", name, err)
		}
	}
	if encoded == 0 {
		t.Errorf("none of %d listed events encodes", len(names))
	}
	expectErrno(t, "a nil function", c.ListEvents(nil), syscall.EINVAL)
}

// ReadCached works on what the BPF backend counts, and says EOPNOTSUPP
// for classic events; it never passes an exact read.
func TestReadCached(t *testing.T) {
	needRoot(t)
	bpf := newContext(t, &Options{Backend: BackendBPF})
	classic := newContext(t, &Options{Backend: BackendPerf})
	dir := makeCgroup(t, bpf)
	hb := open(t, bpf, sw(SWTaskClock, false), Cgroup(dir))
	hc := open(t, classic, sw(SWTaskClock, false), Cgroup(dir))
	ch := spawn(t)
	moveTo(t, dir, ch.pid())
	ch.run(t)
	cached, err := hb.ReadCached()
	if err != nil {
		t.Fatal(err)
	}
	exact := read(t, hb)
	if cached.Value > exact.Value || exact.Value == 0 {
		t.Errorf("cached %d, exact %d", cached.Value, exact.Value)
	}
	_, err = hc.ReadCached()
	expectErrno(t, "ReadCached of a classic event", err, syscall.EOPNOTSUPP)
}

// ReadBound gives Read's reading with a bound: 0 for classic events; for
// the BPF backend a value that, with its bound, is at least what Read
// gave before it. ReadUnattributed says EOPNOTSUPP for classic events and
// reads the BPF backend's totals, per CPU and in all.
func TestReadBoundAndUnattributed(t *testing.T) {
	needRoot(t)
	bpf := newContext(t, &Options{Backend: BackendBPF})
	classic := newContext(t, &Options{Backend: BackendPerf})
	dir := makeCgroup(t, bpf)
	hb := open(t, bpf, sw(SWTaskClock, false), Cgroup(dir))
	hc := open(t, classic, sw(SWTaskClock, false), Cgroup(dir))
	ch := spawn(t)
	moveTo(t, dir, ch.pid())
	ch.run(t)
	before := read(t, hb)
	got, bound, err := hb.ReadBound()
	if err != nil {
		t.Fatal(err)
	}
	if got.Value < before.Value || got.Value == 0 {
		t.Errorf("ReadBound %d after Read %d", got.Value, before.Value)
	}
	if bound > got.TimeEnabled {
		t.Errorf("a task-clock bound of %d ns past its %d ns enabled",
			bound, got.TimeEnabled)
	}
	exact, cbound, err := hc.ReadBound()
	if err != nil || cbound != 0 || exact.Value == 0 {
		t.Errorf("a classic handle: %+v, bound %d, %v", exact, cbound, err)
	}
	_, err = hc.ReadUnattributed(-1)
	expectErrno(t, "ReadUnattributed of a classic event", err,
		syscall.EOPNOTSUPP)
	all, err := hb.ReadUnattributed(-1)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, cpu := range onlineCPUs(t) {
		one, err := hb.ReadUnattributed(cpu)
		if err != nil {
			t.Fatalf("cpu %d: %v", cpu, err)
		}
		sum += one.Value
	}
	// Totals only grow: the CPUs read one by one, after all of them.
	if sum < all.Value {
		t.Errorf("the CPUs' unattributed %d below their sum read before, %d",
			sum, all.Value)
	}
	_, err = hb.ReadUnattributed(-2)
	expectErrno(t, "ReadUnattributed(-2)", err, syscall.EINVAL)
	_, err = hb.ReadUnattributed(1 << 20)
	expectErrno(t, "ReadUnattributed of a CPU the backend lacks", err,
		syscall.EINVAL)
	st, err := classic.Stats()
	if err != nil || st.SwitchesUnseen != 0 || st.UnattributedTime != 0 {
		t.Errorf("a classic context's stats: %+v, %v", st, err)
	}
	if _, err := bpf.Stats(); err != nil {
		t.Error(err)
	}
}

// NoMultiplex never refuses an event that needs no counter; the budget
// has no rows where there is no hardware PMU and sane ones where there is.
func TestNoMultiplexAndBudget(t *testing.T) {
	c := newContext(t, nil)
	h, err := c.OpenWith(sw(SWTaskClock, false), Process(0), NoMultiplex)
	if err != nil {
		t.Fatalf("a software event with NoMultiplex: %v", err)
	}
	defer h.Close()
	_, err = c.OpenWith(sw(SWTaskClock, false), Process(0), 1<<20)
	expectErrno(t, "an unknown open flag", err, syscall.EINVAL)
	rows, err := c.Budget()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.PMU == "" || r.Used != 0 || r.Saved != r.Wanted-uint64(r.Used) {
			t.Errorf("a budget row with no hardware event open: %+v", r)
		}
	}
	if _, err := c.OpenName("cycles", Process(0)); err != nil {
		if len(rows) != 0 {
			t.Errorf("cycles does not open but %d budget rows", len(rows))
		}
	}
}
