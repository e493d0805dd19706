// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"libshpmu/shpmu"
)

// burn keeps the CPU busy until the process has used d more CPU time.
func burn(d time.Duration) {
	used := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for end := used() + d; used() < end; {
	}
}

func ExampleNew() {
	ctx, err := shpmu.New(&shpmu.Options{
		Log: func(level shpmu.LogLevel, msg string) {
			if level <= shpmu.LogWarn {
				log.Print("libshpmu: ", msg)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	fmt.Println("library", shpmu.Version() != "")
	// Output: library true
}

// Two consumers asking for the same event on the same target share one
// kernel event; each still counts only its own window.
func ExampleContext_Open() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	attr := shpmu.Attr{Type: shpmu.TypeSoftware, Config: shpmu.SWTaskClock}
	a, err := ctx.Open(attr, shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	b, err := ctx.Open(attr, shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	st, _ := ctx.Stats()
	fmt.Printf("%d handles, %d kernel event\n", st.Handles, st.KernelEvents)
	// Output: 2 handles, 1 kernel event
}

func ExampleContext_OpenName() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	h, err := ctx.OpenName("context-switches", shpmu.AllCPUsTarget())
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	time.Sleep(10 * time.Millisecond)
	c, err := h.Read()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("switches seen:", c.Value > 0)
	// Output: switches seen: true
}

func ExampleHandle_Read() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	h, err := ctx.OpenName("task-clock", shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	burn(20 * time.Millisecond)
	c, err := h.Read()
	if err != nil {
		log.Fatal(err)
	}
	// task-clock counts ns of CPU time; Scaled corrects for
	// multiplexing (hardware events), here it is the value itself.
	fmt.Println("at least 10 ms:", time.Duration(c.Scaled()) >= 10*time.Millisecond)
	// Output: at least 10 ms: true
}

// Enable, Disable and Reset move one handle's window; other handles on
// the same kernel event are untouched.
func ExampleHandle_Disable() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	attr := shpmu.Attr{Type: shpmu.TypeSoftware,
		Config: shpmu.SWTaskClock, Disabled: true}
	h, err := ctx.Open(attr, shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	burn(time.Millisecond)
	before, _ := h.Read()
	h.Enable()
	burn(time.Millisecond)
	h.Disable()
	during, _ := h.Read()
	h.Reset()
	after, _ := h.Read()
	fmt.Println(before.Value == 0, during.Value > 0, after.Value == 0)
	// Output: true true true
}

func ExampleContext_ReadMany() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	var hs []*shpmu.Handle
	for _, name := range []string{"task-clock", "page-faults", "cs"} {
		h, err := ctx.OpenName(name, shpmu.Process(0))
		if err != nil {
			log.Fatal(err)
		}
		defer h.Close()
		hs = append(hs, h)
	}
	counts := make([]shpmu.Count, len(hs))
	if err := ctx.ReadMany(hs, counts); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(counts), "counts, task-clock running:",
		counts[0].TimeRunning > 0)
	// Output: 3 counts, task-clock running: true
}

func ExampleContext_OpenGroup() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	var attrs []shpmu.Attr
	for _, name := range []string{"task-clock", "page-faults"} {
		a, err := ctx.EventAttr(name)
		if err != nil {
			log.Fatal(err)
		}
		attrs = append(attrs, a)
	}
	g, err := ctx.OpenGroup(attrs, shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	burn(time.Millisecond)
	counts := make([]shpmu.Count, g.Members())
	if err := g.ReadGroup(counts); err != nil {
		log.Fatal(err)
	}
	fmt.Println("members:", len(counts), "same window:",
		counts[0].TimeEnabled == counts[1].TimeEnabled)
	// Output: members: 2 same window: true
}

// Counting a cgroup (here the root: every task on the host).
func ExampleCgroup() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	root, err := ctx.CgroupRoot()
	if err != nil {
		log.Fatal(err)
	}
	h, err := ctx.OpenName("task-clock", shpmu.Cgroup(root))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	burn(5 * time.Millisecond)
	c, _ := h.Read()
	fmt.Println("the host ran:", c.Value > 0)
	// Output: the host ran: true
}

// Errors wrap the errno and carry the library's explanation.
func ExampleError() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	_, err = ctx.OpenName("no-such-event", shpmu.Process(0))
	var e *shpmu.Error
	fmt.Println(errors.Is(err, syscall.ENOENT), errors.As(err, &e) &&
		e.Explanation != "")
	// Output: true true
}

func ExampleErrClosed() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	h, err := ctx.OpenName("task-clock", shpmu.Process(0))
	if err != nil {
		log.Fatal(err)
	}
	h.Close()
	_, err = h.Read()
	fmt.Println(errors.Is(err, shpmu.ErrClosed), errors.Is(err, syscall.EBADF))
	// Output: true true
}

func ExampleCount_Scaled() {
	// Multiplexed: on the PMU half of the time it was enabled.
	c := shpmu.Count{Value: 1000, TimeEnabled: 4000000, TimeRunning: 2000000}
	fmt.Println(c.Scaled())
	// Output: 2000
}

// The counter budget: rows per core PMU and CPU; none on a machine
// without a hardware PMU.
func ExampleContext_Budget() {
	ctx, err := shpmu.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	rows, err := ctx.Budget()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Fprintf(os.Stderr, "%s cpu %d: %d of %d general counters used\n",
			r.PMU, r.CPU, r.Used, r.General)
	}
	fmt.Println("ok")
	// Output: ok
}
