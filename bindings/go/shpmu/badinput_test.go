// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// expectErrno checks err wraps want and that the library left state as it
// was: no handle or kernel event appeared.
func expectErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
		return
	}
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Error(), "shpmu: ") {
		t.Errorf("%s: %T %v is not a *shpmu.Error", what, err, err)
	}
}

func TestClosedHandlesAndContextsReturnErrClosed(t *testing.T) {
	c := newContext(t, nil)
	h := open(t, c, sw(SWTaskClock, false), Process(0))
	g, err := c.OpenGroup([]Attr{sw(SWTaskClock, false)}, Process(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// A new handle may get the closed one's number: the closed Handle
	// must not reach it.
	other := open(t, c, sw(SWPageFaults, false), Process(0))
	_, readErr := h.Read()
	_, cachedErr := h.ReadCached()
	_, cpuErr := h.ReadCPU(-1)
	_, pmuErr := h.ReadPMU("cpu")
	_, _, boundErr := h.ReadBound()
	_, unattributedErr := h.ReadUnattributed(-1)
	calls := map[string]error{
		"Read": readErr, "ReadCached": cachedErr, "ReadCPU": cpuErr,
		"ReadPMU": pmuErr, "ReadBound": boundErr,
		"ReadUnattributed": unattributedErr, "Enable": h.Enable(),
		"Disable": h.Disable(), "Reset": h.Reset(), "Close": h.Close(),
		"ReadGroup": h.ReadGroup(make([]Count, 1)),
		"ReadMany":  c.ReadMany([]*Handle{other, h}, make([]Count, 2)),
	}
	for name, err := range calls {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, syscall.EBADF) {
			t.Errorf("%s on a closed handle: %v", name, err)
		}
	}
	if _, err := other.Read(); err != nil {
		t.Errorf("the other handle: %v", err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, openErr := c.Open(sw(SWTaskClock, false), Process(0))
	_, statsErr := c.Stats()
	_, rootErr := c.CgroupRoot()
	_, gErr := g.Read()
	for name, err := range map[string]error{"Open": openErr,
		"Stats": statsErr, "CgroupRoot": rootErr, "group Read": gErr,
		"other Read": other.Close(), "second Close": c.Close()} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after the context's Close: %v", name, err)
		}
	}
}

func TestUnknownEventsAreENOENTWithAnExplanation(t *testing.T) {
	c := newContext(t, nil)
	_, err := c.OpenName("no-such-event-anywhere", Process(0))
	expectErrno(t, "OpenName", err, syscall.ENOENT)
	if explanation(err) == "" {
		t.Errorf("no explanation for %v", err)
	}
	_, err = c.EventAttr("task-clock:zz")
	expectErrno(t, "a bad modifier", err, syscall.EINVAL)
	_, err = c.OpenName("", Process(0))
	expectErrno(t, "an empty name", err, syscall.EINVAL)
	_, err = c.OpenName("task-clock\x00", Process(0))
	expectErrno(t, "a NUL in a name", err, syscall.EINVAL)
	_, err = c.Open(Attr{Type: 0x7fff0000, Config: 1}, Process(0))
	if err == nil {
		t.Error("an event type no PMU has was opened")
	}
	a, err := c.EventAttr("task-clock:u")
	if err != nil || a.Type != TypeSoftware || a.Config != SWTaskClock ||
		!a.ExcludeKernel || a.ExcludeUser {
		t.Errorf("task-clock:u: %+v, %v", a, err)
	}
	expectUnchanged(t, c)
}

// expectUnchanged: failed calls left no handle or event behind.
func expectUnchanged(t *testing.T, c *Context) {
	t.Helper()
	st, err := c.Stats()
	if err != nil || st.Handles != 0 || st.KernelEvents != 0 ||
		st.KernelFDs != 0 {
		t.Errorf("after failed calls: %+v, %v", st, err)
	}
}

func TestBadCgroupPaths(t *testing.T) {
	needRoot(t)
	c := newContext(t, nil)
	root, err := c.CgroupRoot()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want syscall.Errno
	}{
		{"no-such-cgroup-here", syscall.ENOENT},
		{"../outside", syscall.EINVAL},
		{"a/../b", syscall.EINVAL},
		{"/definitely/not/under/the/root", syscall.EXDEV},
		{"cgroup.procs", syscall.ENOTDIR},
		{strings.Repeat("x/", 3000), syscall.ENAMETOOLONG},
		{strings.Repeat("x", 300), syscall.ENOENT}, // kernfs has no NAME_MAX check
		{"a\x00b", syscall.EINVAL},
	}
	for _, tc := range cases {
		_, err := c.Open(sw(SWTaskClock, false), Cgroup(tc.path))
		expectErrno(t, "Cgroup("+tc.path+")", err, tc.want)
		_, err = c.CgroupID(tc.path)
		expectErrno(t, "CgroupID("+tc.path+")", err, tc.want)
	}
	_, err = c.CgroupPath(1 << 62)
	expectErrno(t, "CgroupPath of no cgroup", err, syscall.ENOENT)
	if id, err := c.CgroupID(root); err != nil {
		t.Errorf("the root's id: %v", err)
	} else if p, err := c.CgroupPath(id); err != nil || p != root {
		t.Errorf("the root's path: %q, %v", p, err)
	}
	expectUnchanged(t, c)
}

func TestWrongSizesAndBadTargets(t *testing.T) {
	c := newContext(t, nil)
	h := open(t, c, sw(SWTaskClock, false), Process(0))
	g, err := c.OpenGroup([]Attr{sw(SWTaskClock, false),
		sw(SWPageFaults, false)}, Process(0))
	if err != nil {
		t.Fatal(err)
	}
	other := newContext(t, nil)
	stranger := open(t, other, sw(SWTaskClock, false), Process(0))

	expectErrno(t, "ReadMany, short out",
		c.ReadMany([]*Handle{h, h}, make([]Count, 1)), syscall.EINVAL)
	expectErrno(t, "ReadMany, a nil handle",
		c.ReadMany([]*Handle{h, nil}, make([]Count, 2)), syscall.EINVAL)
	expectErrno(t, "ReadMany, another context's handle",
		c.ReadMany([]*Handle{stranger}, make([]Count, 1)), syscall.EINVAL)
	expectErrno(t, "ReadGroup, room for 1 of 2",
		g.ReadGroup(make([]Count, 1)), syscall.ERANGE)
	expectErrno(t, "ReadGroup, no room", g.ReadGroup(nil), syscall.EINVAL)
	_, err = c.OpenGroup(nil, Process(0))
	expectErrno(t, "a group of none", err, syscall.EINVAL)
	_, err = c.OpenGroup(make([]Attr, GroupMax+1), Process(0))
	expectErrno(t, "a group too large", err, syscall.EINVAL)
	if err := c.ReadMany(nil, nil); err != nil {
		t.Errorf("ReadMany of nothing: %v", err)
	}

	targets := map[string]struct {
		t    Target
		want syscall.Errno
	}{
		"a CPU that does not exist": {CPU(100000), syscall.EINVAL},
		"CPU -2":                    {CPU(-2), syscall.EINVAL},
		"an unknown kind":           {Target{Kind: 99}, syscall.EINVAL},
		"a pid out of range":        {Task(1 << 40), syscall.EINVAL},
		"no such process":           {Process(1 << 30), syscall.ESRCH},
	}
	before, _ := c.Stats()
	for name, tc := range targets {
		_, err := c.Open(sw(SWTaskClock, false), tc.t)
		expectErrno(t, name, err, tc.want)
	}
	_, err = h.ReadCPU(-2)
	expectErrno(t, "ReadCPU(-2)", err, syscall.EINVAL)
	_, err = h.ReadPMU("")
	expectErrno(t, "ReadPMU(\"\")", err, syscall.EINVAL)
	_, err = h.ReadPMU("no_such_pmu")
	expectErrno(t, "ReadPMU of a software event", err, syscall.ENOENT)
	if after, _ := c.Stats(); after != before {
		t.Errorf("failed opens changed the context: %+v, then %+v",
			before, after)
	}
}

func TestBadOptions(t *testing.T) {
	cases := map[string]struct {
		o    Options
		want syscall.Errno
	}{
		"an unknown backend": {Options{Backend: 7}, syscall.EINVAL},
		"an unknown scope":   {Options{Scope: 9}, syscall.EINVAL},
		"a bad domain": {Options{Scope: ScopeHost, Domain: "no/slash",
			Backend: BackendBPF}, syscall.EINVAL},
		"a negative lock timeout": {Options{LockTimeout: -1}, syscall.EINVAL},
		"host scope, classic events": {Options{Scope: ScopeHost,
			Backend: BackendPerf}, syscall.EINVAL},
		"a cgroup root that is not one": {Options{CgroupRoot: "/proc"},
			syscall.EINVAL},
		// C would read each cut short at the NUL: a path or domain
		// other than the caller's.
		"a NUL in the cgroup root": {Options{
			CgroupRoot: "/sys/fs/cgroup\x00/x"}, syscall.EINVAL},
		"a NUL in the domain": {Options{Scope: ScopeHost,
			Backend: BackendBPF, Domain: "ok\x00/../x"}, syscall.EINVAL},
		"a NUL in the BPF directory": {Options{Scope: ScopeHost,
			Backend: BackendBPF, BPFFSDir: "/tmp\x00x"}, syscall.EINVAL},
	}
	for name, tc := range cases {
		c, err := New(&tc.o)
		if c != nil {
			c.Close()
		}
		expectErrno(t, name, err, tc.want)
	}
}

// The log function gets the library's messages, an error's included.
func TestLogReceivesMessages(t *testing.T) {
	var got []string
	c := newContext(t, &Options{Log: func(l LogLevel, msg string) {
		if l == LogError {
			got = append(got, msg)
		}
	}})
	c.OpenName("no-such-event-anywhere", Process(0))
	if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"),
		"no-such-event-anywhere") {
		t.Errorf("logged errors: %q", got)
	}
}

// The zero Target counts the calling thread on any CPU, and a cgroup or
// CPU target without BindCPU counts on every CPU: none of them is
// quietly bound to CPU 0.
func TestZeroTargetsCountOnEveryCPU(t *testing.T) {
	c := newContext(t, nil)
	for _, tg := range []Target{{}, {Kind: TargetProcess},
		{Kind: TargetCPU}, {Kind: TargetCgroup, CgroupPath: ""}} {
		h, err := c.Open(sw(SWTaskClock, false), tg)
		if err != nil {
			if tg.Kind == TargetCgroup && errors.Is(err, syscall.ENOENT) {
				continue // no cgroup mount here
			}
			t.Fatalf("%+v: %v", tg, err)
		}
		_, err = h.ReadCPU(0)
		if tg.Kind == TargetCPU || tg.Kind == TargetCgroup {
			if len(onlineCPUs(t)) > 1 && err != nil {
				t.Errorf("%+v: not on CPU 0: %v", tg, err)
			}
			if _, err := h.ReadCPU(len(onlineCPUs(t)) - 1); err != nil {
				t.Errorf("%+v: not on the last CPU: %v", tg, err)
			}
		} else if !errors.Is(err, syscall.ENOENT) {
			t.Errorf("%+v: bound to CPU 0 (ReadCPU(0): %v)", tg, err)
		}
		h.Close()
	}
	_, err := c.Open(sw(SWTaskClock, false), Target{BindCPU: true, CPU: -1})
	expectErrno(t, "BindCPU with CPU -1", err, syscall.EINVAL)
}

// A panic in the log function is recovered inside the library's call, so
// the library's locks are released and the context works on.
func TestAPanicInLogLeavesTheContextWorking(t *testing.T) {
	var logged atomic.Int32
	c := newContext(t, &Options{Log: func(LogLevel, string) {
		logged.Add(1)
		panic("a log function that panics")
	}})
	_, err := c.Open(sw(SWTaskClock, false), CPU(1<<20))
	expectErrno(t, "a CPU that is not online", err, syscall.EINVAL)
	if logged.Load() == 0 {
		t.Fatal("the refused open logged nothing: no panic to test")
	}
	done := make(chan error, 1)
	go func() {
		h, err := c.OpenName("task-clock", Process(0))
		if err == nil {
			err = h.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after a panic in Log: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the context hangs after a panic in Log")
	}
	// ListEvents raises its function's panic again, after the walk.
	defer func() {
		if v := recover(); v != "stop" {
			t.Errorf("ListEvents' panic: %v", v)
		}
		if _, err := c.Stats(); err != nil {
			t.Errorf("after a panic in ListEvents: %v", err)
		}
	}()
	c.ListEvents(func(string, string) bool { panic("stop") })
	t.Error("ListEvents returned after its function panicked")
}
