// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"
)

// What the binding adds to the C calls, measured against C loops over the
// same handles in the same run (go test -run '^$' -bench Overhead):
// goals: at most 100 ns per Read, ReadMany of 1024 handles within 1.2x of
// C. The figures are printed, not judged (a shared machine is noisy).

// readTarget is a task-clock handle on this goroutine's own thread: one
// kernel fd, read without an interrupt to another CPU.
func readTarget(b *testing.B, c *Context) *Handle {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	return open(b, c, sw(SWTaskClock, false), Task(syscall.Gettid()))
}

// manyHandles is 1024 handles over 8 software events of this thread, as
// the C benchmark's read_many (128 handles share each kernel event).
func manyHandles(b *testing.B, c *Context) []*Handle {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	hs := make([]*Handle, 1024)
	for i := range hs {
		hs[i] = open(b, c, sw(uint64(i%8), false), Task(syscall.Gettid()))
	}
	return hs
}

func BenchmarkRead(b *testing.B) {
	c := newContext(b, nil)
	h := readTarget(b, c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadC(b *testing.B) {
	c := newContext(b, nil)
	h := readTarget(b, c)
	b.ResetTimer()
	if cReadLoop(h, b.N) < 0 {
		b.Fatal("shpmu_read failed")
	}
}

func BenchmarkReadMany1024(b *testing.B) {
	c := newContext(b, nil)
	hs := manyHandles(b, c)
	out := make([]Count, len(hs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.ReadMany(hs, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadMany1024C(b *testing.B) {
	c := newContext(b, nil)
	hs := manyHandles(b, c)
	b.ResetTimer()
	if cReadManyLoop(c, hs, b.N) < 0 {
		b.Fatal("shpmu_read_many failed")
	}
}

// rounds times each loop n times per round, the loops taking turns so
// that all see the same machine, and gives each loop's median ns per call.
func rounds(n int, loops ...func(n int) time.Duration) []float64 {
	ns := make([][]float64, len(loops))
	for r := 0; r < 21; r++ {
		for i, loop := range loops {
			ns[i] = append(ns[i], float64(loop(n))/float64(n))
		}
	}
	med := make([]float64, len(loops))
	for i := range ns {
		sort.Float64s(ns[i])
		med[i] = ns[i][len(ns[i])/2]
	}
	return med
}

func goLoop(call func()) func(n int) time.Duration {
	return func(n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			call()
		}
		return time.Since(start)
	}
}

// BenchmarkOverhead prints the figures the goals are about: Read from
// Go against the same shpmu_read from a C loop (and from a bare cgo call,
// which tells cgo's share from the binding's), and ReadMany of 1024
// handles against shpmu_read_many from C.
func BenchmarkOverhead(b *testing.B) {
	c := newContext(b, nil)
	h := readTarget(b, c)
	hs := manyHandles(b, c)
	out := make([]Count, len(hs))
	for i := 0; i < b.N; i++ {
		r := rounds(20000,
			goLoop(func() { h.Read() }),
			goLoop(func() { cgoReadOnce(h) }),
			func(n int) time.Duration { return cReadLoop(h, n) })
		m := rounds(200,
			goLoop(func() { c.ReadMany(hs, out) }),
			func(n int) time.Duration { return cReadManyLoop(c, hs, n) })
		b.ReportMetric(r[0]-r[2], "cgo-ns/Read")
		b.ReportMetric(r[0]-r[1], "binding-ns/Read")
		b.ReportMetric(m[0]/m[1], "ReadMany-go/c")
		b.Logf("Read: Go %.0f ns, a bare cgo call %.0f ns, C %.0f ns: "+
			"Go adds %.0f ns (goal <= 100), the binding's own share %.0f ns",
			r[0], r[1], r[2], r[0]-r[2], r[0]-r[1])
		b.Logf("ReadMany of 1024 handles: Go %.1f us, C %.1f us: "+
			"%.2fx (goal <= 1.2)", m[0]/1e3, m[1]/1e3, m[0]/m[1])
	}
}
