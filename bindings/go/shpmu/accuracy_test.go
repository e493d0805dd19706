// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"math"
	"os"
	"syscall"
	"testing"
)

// The accuracy rules of the C suite, through the binding: a handle and
// private raw events around the very same window agree. Each handle is
// sandwiched between two raw events: outer, enabled before it and disabled
// after, and inner, enabled after it and disabled before; so inner <=
// handle <= outer always. The work is a child that waits on a pipe while
// the windows open and close, so nothing falls between them and inner ==
// outer == handle. CPU-wide windows see the whole machine and hold only
// the sandwich.

type sandwich struct {
	name                 string
	inner, handle, outer uint64
}

func (s sandwich) check(t *testing.T, exact bool) {
	t.Helper()
	if s.inner > s.handle || s.handle > s.outer {
		t.Errorf("%s: handle %d outside its raw events [%d, %d]",
			s.name, s.handle, s.inner, s.outer)
	}
	if exact && (s.inner != s.outer || s.handle != s.outer) {
		t.Errorf("%s: handle %d, raw events %d and %d: not exact",
			s.name, s.handle, s.inner, s.outer)
	}
}

var childEvents = []struct {
	name   string
	config uint64
	min    uint64 // what the child's work makes at least
}{
	{"context-switches", SWContextSwitches, 8},
	{"page-faults", SWPageFaults, 50},
	{"task-clock", SWTaskClock, 1000000},
}

// measureChild counts a waiting child's work with handles made by open
// (on the pid) between raw events on the same pid; a second handle on the
// same kernel event comes and goes around the window.
func measureChild(t *testing.T, c *Context, target func(pid int) Target) {
	ch := spawn(t)
	pid := ch.pid()
	var outer, inner rawSet
	var hs, noisy []*Handle
	for _, ev := range childEvents {
		outer = append(outer, rawOpen(t, ev.config, pid, -1, 0))
		inner = append(inner, rawOpen(t, ev.config, pid, -1, 0))
		hs = append(hs, open(t, c, sw(ev.config, true), target(pid)))
		noisy = append(noisy, open(t, c, sw(ev.config, false), target(pid)))
	}
	outer.enable(t)
	for i, h := range hs {
		if err := h.Enable(); err != nil {
			t.Fatal(err)
		}
		noisy[i].Reset()
		noisy[i].Disable()
	}
	inner.enable(t)
	ch.run(t)
	inner.disable(t)
	for _, h := range hs {
		if err := h.Disable(); err != nil {
			t.Fatal(err)
		}
	}
	outer.disable(t)
	for i, ev := range childEvents {
		got := read(t, hs[i])
		s := sandwich{ev.name, inner[i].value(t), got.Value,
			outer[i].value(t)}
		s.check(t, true)
		if got.Value < ev.min {
			t.Errorf("%s: %d, the work makes at least %d", ev.name,
				got.Value, ev.min)
		}
		if got.TimeEnabled == 0 || got.TimeRunning != got.TimeEnabled {
			t.Errorf("%s: times %d and %d ns", ev.name,
				got.TimeEnabled, got.TimeRunning)
		}
	}
	st, err := c.Stats()
	if err != nil || st.KernelEvents != uint64(len(childEvents)) ||
		st.SharedOpens != uint64(len(childEvents)) {
		t.Errorf("two handles per event should share one: %+v, %v", st, err)
	}
}

func TestTaskHandleMatchesPrivateRawEvents(t *testing.T) {
	needRoot(t)
	c := newContext(t, &Options{Backend: BackendPerf})
	measureChild(t, c, Task)
}

func TestProcessHandleMatchesPrivateRawEvents(t *testing.T) {
	needRoot(t)
	c := newContext(t, &Options{Backend: BackendPerf})
	measureChild(t, c, Process)
}

// A CPU-wide handle lies between raw events on every CPU, in sum and on
// each CPU (ReadCPU).
func TestAllCPUsHandleLiesBetweenPrivateRawEvents(t *testing.T) {
	needRoot(t)
	c := newContext(t, nil)
	outer := rawCPUs(t, SWContextSwitches, -1)
	inner := rawCPUs(t, SWContextSwitches, -1)
	h := open(t, c, sw(SWContextSwitches, true), AllCPUsTarget())
	outer.enable(t)
	if err := h.Enable(); err != nil {
		t.Fatal(err)
	}
	inner.enable(t)
	spawn(t).run(t)
	inner.disable(t)
	h.Disable()
	outer.disable(t)

	got := read(t, h)
	sandwich{"all CPUs", inner.value(t), got.Value, outer.value(t)}.check(t, false)
	if got.Value < 8 {
		t.Errorf("all CPUs: %d switches, the child alone makes 8", got.Value)
	}
	for i, cpu := range onlineCPUs(t) {
		one, err := h.ReadCPU(cpu)
		if err != nil {
			t.Fatalf("ReadCPU(%d): %v", cpu, err)
		}
		sandwich{"one CPU", inner[i].value(t), one.Value,
			outer[i].value(t)}.check(t, false)
	}
}

// The same cgroup counted by the BPF backend and by classic cgroup events
// agrees, and the classic handle matches raw cgroup events exactly (the
// child is the only task in the cgroup). By id and by path is one event.
//
// The BPF handle is read with its bound (ReadBound): where the kernel
// switched without running the program, its count falls short of the
// truth by at most the bound, and never exceeds it. Besides that, the
// tolerances of the C suite (tests/cgroup_helpers.h): 1 switch, and for
// task-clock half a per cent or 3 us for each of the cgroup's switches,
// where that is more (the two backends cut each switch at other points of
// the kernel's switch path). One window, measured once.
func TestCgroupBPFAgreesWithClassic(t *testing.T) {
	needRoot(t)
	bpf := newContext(t, &Options{Backend: BackendBPF})
	classic := newContext(t, &Options{Backend: BackendPerf})
	before, _ := bpf.Stats()
	dir := makeCgroup(t, classic)
	id, err := classic.CgroupID(dir)
	if err != nil {
		t.Fatal(err)
	}
	cgfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(cgfd)

	ch := spawn(t)
	moveTo(t, dir, ch.pid())
	configs := []uint64{SWContextSwitches, SWTaskClock}
	var hb, hc, byID []*Handle
	var outer, inner []rawSet
	for _, cfg := range configs {
		outer = append(outer, rawCPUs(t, cfg, cgfd))
		inner = append(inner, rawCPUs(t, cfg, cgfd))
		hb = append(hb, open(t, bpf, sw(cfg, true), Cgroup(dir)))
		byID = append(byID, open(t, bpf, sw(cfg, true), CgroupByID(id)))
		hc = append(hc, open(t, classic, sw(cfg, true), Cgroup(dir)))
	}
	for i := range configs {
		outer[i].enable(t)
		hc[i].Enable()
		hb[i].Enable()
		byID[i].Enable()
		inner[i].enable(t)
	}
	ch.run(t)
	for i := range configs {
		inner[i].disable(t)
		hc[i].Disable()
		hb[i].Disable()
		byID[i].Disable()
		outer[i].disable(t)
	}
	st, _ := bpf.Stats()
	if st.SharedOpens-before.SharedOpens != uint64(len(configs)) {
		t.Errorf("by id should share the path's events: %+v", st)
	}
	var switches uint64
	for i, name := range []string{"context-switches", "task-clock"} {
		c := read(t, hc[i])
		b, bound, err := hb[i].ReadBound()
		if err != nil {
			t.Fatal(err)
		}
		sandwich{name + " classic", inner[i].value(t), c.Value,
			outer[i].value(t)}.check(t, true)
		if d := read(t, byID[i]); d != b {
			t.Errorf("%s: by id %+v, by path %+v", name, d, b)
		}
		tol := 1.0
		if configs[i] == SWTaskClock {
			tol = math.Max(0.005*float64(c.Value),
				3000*float64(switches))
		} else {
			switches = c.Value
		}
		t.Logf("%s: BPF %d (bound %d), classic %d, tolerance %.0f",
			name, b.Value, bound, c.Value, tol)
		if float64(b.Value) > float64(c.Value)+tol ||
			float64(b.Value+bound)+tol < float64(c.Value) {
			t.Errorf("%s: BPF %d (bound %d), classic %d: not within "+
				"the bound and %.0f", name, b.Value, bound,
				c.Value, tol)
		}
	}
}

// A group's members each match a raw event around the same window.
func TestGroupMembersMatchPrivateRawEvents(t *testing.T) {
	needRoot(t)
	c := newContext(t, nil)
	ch := spawn(t)
	attrs := []Attr{sw(SWTaskClock, true), sw(SWContextSwitches, false),
		sw(SWPageFaults, false)}
	var outer, inner rawSet
	for _, a := range attrs {
		outer = append(outer, rawOpen(t, a.Config, ch.pid(), -1, 0))
		inner = append(inner, rawOpen(t, a.Config, ch.pid(), -1, 0))
	}
	g, err := c.OpenGroup(attrs, Task(ch.pid()))
	if err != nil {
		t.Fatal(err)
	}
	if g.Members() != 3 {
		t.Fatalf("members: %d", g.Members())
	}
	outer.enable(t)
	g.Enable()
	inner.enable(t)
	ch.run(t)
	inner.disable(t)
	g.Disable()
	outer.disable(t)
	out := make([]Count, 3)
	if err := g.ReadGroup(out); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"task-clock", "context-switches", "page-faults"} {
		sandwich{name, inner[i].value(t), out[i].Value,
			outer[i].value(t)}.check(t, true)
		if out[i].TimeEnabled != out[0].TimeEnabled {
			t.Errorf("%s: the group's times differ", name)
		}
	}
	if leader := read(t, g); leader != out[0] {
		t.Errorf("Read gives %+v, the leader is %+v", leader, out[0])
	}
}

// Two handles share one kernel event and each sees only its own windows:
// enable, disable and reset of one leave the other alone.
func TestHandlesShareAnEventAndKeepTheirWindows(t *testing.T) {
	c := newContext(t, nil)
	a := open(t, c, sw(SWPageFaults, false), Process(0))
	b := open(t, c, sw(SWPageFaults, true), Process(0))
	touch(400)
	if v := read(t, b).Value; v != 0 {
		t.Errorf("a disabled handle counted %d", v)
	}
	b.Enable()
	touch(400)
	b.Disable()
	frozen := read(t, b)
	touch(400)
	if again := read(t, b); again != frozen {
		t.Errorf("a disabled handle moved: %+v then %+v", frozen, again)
	}
	if frozen.Value < 400 || read(t, a).Value < frozen.Value+800 {
		t.Errorf("b %d (at least 400), a %d (at least b + 800)",
			frozen.Value, read(t, a).Value)
	}
	if err := b.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := read(t, b); v != (Count{}) {
		t.Errorf("after Reset: %+v", v)
	}
	if read(t, a).Value < 1200 {
		t.Errorf("b's reset reached a")
	}
	st, _ := c.Stats()
	if st.KernelEvents != 1 || st.Handles != 2 || st.SharedOpens != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// touch faults in n fresh pages.
func touch(n int) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, n*page, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		mem[i*page] = 1
	}
	syscall.Munmap(mem)
}

// ReadMany gives exactly what each Read gives, over handles of every kind.
func TestReadManyEqualsRead(t *testing.T) {
	c := newContext(t, nil)
	var hs []*Handle
	for i := 0; i < 50; i++ {
		hs = append(hs, open(t, c, sw(SWPageFaults, false), Process(0)))
		hs = append(hs, open(t, c, sw(SWContextSwitches, false), AllCPUsTarget()))
		hs = append(hs, open(t, c, sw(SWTaskClock, false), CPU(0)))
		touch(10)
	}
	for _, h := range hs {
		h.Disable()
	}
	out := make([]Count, len(hs))
	if err := c.ReadMany(hs, out); err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if one := read(t, h); one != out[i] {
			t.Errorf("handle %d: Read %+v, ReadMany %+v", i, one, out[i])
		}
	}
	if out[0].Value <= out[147].Value || out[147].Value == 0 {
		t.Errorf("the first page-fault handle counted %d, the last %d",
			out[0].Value, out[147].Value)
	}
}

// Count.Scaled is the library's shpmu_scale, edges included.
func TestScaledIsTheLibrarys(t *testing.T) {
	edges := []Count{{}, {Value: 5}, {Value: 5, TimeEnabled: 10},
		{Value: 5, TimeEnabled: 10, TimeRunning: 10},
		{Value: 5, TimeEnabled: 10, TimeRunning: 20},
		{Value: 7, TimeEnabled: 3, TimeRunning: 2},
		{Value: ^uint64(0), TimeEnabled: 1 << 62, TimeRunning: 1 << 61},
		{Value: 1 << 62, TimeEnabled: 1 << 62, TimeRunning: 1},
		{Value: ^uint64(0) / 2, TimeEnabled: 2, TimeRunning: 1},
		{Value: ^uint64(0)/2 + 1, TimeEnabled: 2, TimeRunning: 1}}
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed >> (seed % 64)
	}
	for i := 0; i < 100000; i++ {
		edges = append(edges, Count{Value: next(),
			TimeEnabled: next(), TimeRunning: next()})
	}
	for _, c := range edges {
		if got, want := c.Scaled(), cScale(c); got != want {
			t.Fatalf("%+v: Scaled %d, shpmu_scale %d", c, got, want)
		}
	}
}
