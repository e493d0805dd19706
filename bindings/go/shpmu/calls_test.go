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
