// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Goroutines open, enable, read, read many, reset, disable and close
// handles of one context at once; a closer closes and replaces handles
// that the others are using (a Close racing with calls on the same
// handle), and the context is closed at the end while they all still
// run. Under -race: no report; always: a count of a handle nobody
// disables never goes backwards, every error is ErrClosed (a closed
// handle or context) and nothing else fails.
func TestManyGoroutinesOnOneContext(t *testing.T) {
	c, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	targets := []Target{Process(0), AllCPUsTarget(), CPU(0)}
	configs := []uint64{SWTaskClock, SWContextSwitches, SWPageFaults}
	shared := make([]*Handle, 0, 9)
	for _, tg := range targets {
		for _, cfg := range configs {
			shared = append(shared, open(t, c, sw(cfg, false), tg))
		}
	}

	// Victims: handles one goroutine closes and replaces while the
	// others read, enable, disable and reset them.
	victims := make([]atomic.Pointer[Handle], 4)
	for i := range victims {
		victims[i].Store(open(t, c, sw(configs[i%3], false), targets[i%3]))
	}

	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	failures := make(chan error, 64)
	fail := func(err error) {
		select {
		case failures <- err:
		default:
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(deadline); i++ {
			fresh, err := c.Open(sw(configs[i%3], false), targets[i%3])
			if err != nil {
				if !errors.Is(err, ErrClosed) {
					fail(err)
				}
				return
			}
			old := victims[i%len(victims)].Swap(fresh)
			if err := old.Close(); err != nil && !errors.Is(err, ErrClosed) {
				fail(err)
			}
		}
	}()
	// only ErrClosed may fail a call
	check := func(err error) {
		if err != nil && !errors.Is(err, ErrClosed) {
			fail(err)
		}
	}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			var mine []*Handle
			last := map[*Handle]uint64{}
			for time.Now().Before(deadline) {
				switch op := rng.Intn(8); {
				case op == 0 && len(mine) < 16:
					h, err := c.Open(sw(configs[rng.Intn(3)], false),
						targets[rng.Intn(3)])
					if err == nil {
						mine = append(mine, h)
					} else if !errors.Is(err, ErrClosed) {
						fail(err)
					}
				case op == 1 && len(mine) > 0:
					i := rng.Intn(len(mine))
					if err := mine[i].Close(); err != nil &&
						!errors.Is(err, ErrClosed) {
						fail(err)
					}
					delete(last, mine[i])
					mine = append(mine[:i], mine[i+1:]...)
				case op == 2 && len(mine) > 0:
					h := mine[rng.Intn(len(mine))]
					check(h.Disable())
					check(h.Reset())
					delete(last, h)
					check(h.Enable())
				case op == 4:
					v := victims[rng.Intn(len(victims))].Load()
					_, err := v.Read()
					check(err)
					check(v.Disable())
					check(v.Enable())
					check(v.Reset())
					out := make([]Count, 2)
					check(c.ReadMany([]*Handle{v, shared[0]}, out))
				case op == 3:
					out := make([]Count, len(shared))
					err := c.ReadMany(shared, out)
					if err != nil && !errors.Is(err, ErrClosed) {
						fail(err)
					}
					for i, h := range shared {
						if err == nil && out[i].Value < last[h] {
							fail(errors.New("a count went back"))
						}
						if err == nil {
							last[h] = out[i].Value
						}
					}
				default:
					all := append(append([]*Handle{}, shared...), mine...)
					h := all[rng.Intn(len(all))]
					got, err := h.Read()
					if err != nil && !errors.Is(err, ErrClosed) {
						fail(err)
					}
					if err == nil && got.Value < last[h] {
						fail(errors.New("a count went back"))
					}
					if err == nil {
						last[h] = got.Value
					}
				}
			}
		}(int64(g))
	}
	time.Sleep(time.Until(deadline) - 200*time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
}
