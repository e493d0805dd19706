// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <shpmu/shpmu.h>
*/
import "C"

// PMUBudget is the counter budget of one core PMU on one CPU.
type PMUBudget struct {
	PMU  string // "cpu", "cpu_core", "cpu_atom", ...
	Type uint32 // its perf type
	// CPU is the CPU, or -1: the events that follow a task, counted as
	// if they all ran on one CPU (an upper bound for any one task).
	CPU       int
	General   uint32 // general-purpose counters; 0: unknown
	Fixed     uint32 // fixed counters
	Watchdog  uint32 // general counters the NMI watchdog holds
	Used      uint32 // counters this context's distinct events need
	UsedFixed uint32 // of Used, those on fixed counters
	// Multiplexing: Used does not fit, so counts are scaled.
	Multiplexing bool
	Wanted       uint64 // counters the handles would need unshared
	Saved        uint64 // Wanted - Used: what sharing saves
}

// Budget gives, for each core PMU and each of its CPUs (then a row with
// CPU -1 for task events), its counters and what the context's hardware
// events need of them; none where the machine has no core PMU.
func (c *Context) Budget() ([]PMUBudget, error) {
	if err := c.lock("budget"); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	for {
		n := C.shpmu_pmu_budget(c.pmu, nil, 0)
		if n <= 0 {
			if n < 0 {
				return nil, c.fail("budget", -1, n)
			}
			return nil, nil
		}
		rows := make([]C.struct_shpmu_pmu_budget, n)
		got := C.shpmu_pmu_budget(c.pmu, &rows[0], C.size_t(n))
		if got < 0 {
			return nil, c.fail("budget", -1, got)
		}
		if got > n { // a PMU appeared between the calls
			continue
		}
		out := make([]PMUBudget, got)
		for i := range out {
			r := &rows[i]
			out[i] = PMUBudget{PMU: C.GoString(&r.pmu[0]),
				Type: uint32(r._type), CPU: int(r.cpu),
				General: uint32(r.general), Fixed: uint32(r.fixed),
				Watchdog: uint32(r.watchdog), Used: uint32(r.used),
				UsedFixed:    uint32(r.used_fixed),
				Multiplexing: r.multiplexing != 0,
				Wanted:       uint64(r.wanted), Saved: uint64(r.saved)}
		}
		return out, nil
	}
}
