// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Command shpmu-top is a per-cgroup live view of one perf event: every
// interval it shows the event's rate in each cgroup of a subtree, busiest
// first. It is an example of how a monitoring agent uses libshpmu: one
// handle per cgroup, kept open across refreshes, all read with one
// ReadMany.
//
//	shpmu-top [-e EVENT] [-i INTERVAL] [-n COUNT] [-root PATH] [-depth N]
//	          [-top N] [-backend auto|bpf|perf]
//	shpmu-top -list
//
// -root is a cgroup path, taken under the cgroup mount (/ or "" for the
// root cgroup), or an absolute path below the mount.
//
// The root cgroup holds every task, and every CPU's idle task too: its
// task-clock and cpu-clock count idle time, about 100% CPU per CPU
// whatever the load. It is shown apart, below the ranking, and labelled
// so.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"libshpmu/shpmu"
)

// usageError is a bad command line (exit status 2).
type usageError struct{ error }

// cgroup is one watched cgroup: its handle and its previous reading.
type cgroup struct {
	h    *shpmu.Handle
	prev uint64 // Scaled() at the last reading
	read bool   // prev is valid: the cgroup has been read once
}

// row is one line of a refresh; rate < 0 means no rate yet.
type row struct {
	path string
	rate float64
}

// eventNotFound is an event name this machine does not have, said as
// shpmu-stat says it.
type eventNotFound struct {
	name string
	err  error
}

func (e eventNotFound) Error() string {
	return fmt.Sprintf("event '%s': event not found (shpmu-top -list shows what this machine has)", e.name)
}

func (e eventNotFound) Unwrap() error { return e.err }

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	stop := make(chan struct{})
	go func() { <-sigs; close(stop) }()

	err := run(os.Args[1:], os.Stdout, stop)
	var ue usageError
	var nf eventNotFound
	var se *shpmu.Error
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "shpmu-top:", err)
		os.Exit(2)
	case errors.As(err, &nf):
		fmt.Fprintln(os.Stderr, "shpmu-top:", err)
		os.Exit(1)
	case errors.As(err, &se) && se.Explanation != "":
		fmt.Fprintf(os.Stderr, "shpmu-top: %v\n%s\n", err, se.Explanation)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "shpmu-top:", err)
		os.Exit(1)
	}
}

// run parses args, then refreshes the view on out every interval until
// -n refreshes are done or stop is closed.
func run(args []string, out io.Writer, stop <-chan struct{}) error {
	fl := flag.NewFlagSet("shpmu-top", flag.ContinueOnError)
	event := fl.String("e", "task-clock", "event to count (any name libshpmu takes)")
	interval := fl.Duration("i", time.Second, "refresh interval")
	count := fl.Int("n", 0, "refreshes before exiting (0: until interrupted)")
	rootArg := fl.String("root", "", "cgroup subtree to watch, under the cgroup mount (/ or \"\": all)")
	depth := fl.Int("depth", 2, "levels of cgroups below -root to list")
	top := fl.Int("top", 20, "rows shown")
	backendArg := fl.String("backend", "auto", "cgroup counting: auto, bpf or perf")
	list := fl.Bool("list", false, "list this machine's events and exit")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	backends := map[string]shpmu.Backend{"auto": shpmu.BackendAuto,
		"bpf": shpmu.BackendBPF, "perf": shpmu.BackendPerf}
	backend, ok := backends[*backendArg]
	switch {
	case !ok:
		return usageError{fmt.Errorf("-backend %q: want auto, bpf or perf", *backendArg)}
	case *interval <= 0 || *count < 0 || *depth < 0 || *top <= 0:
		return usageError{errors.New("-i and -top must be positive, -n and -depth not negative")}
	case fl.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q", fl.Arg(0))}
	}

	// The library's warnings, AUTO's choice of backend among them. Its
	// errors come back as the calls' errors, said once by main.
	say := func(level shpmu.LogLevel, msg string) {
		if level == shpmu.LogWarn {
			fmt.Fprintln(os.Stderr, "shpmu-top:", msg)
		}
	}
	ctx, err := shpmu.New(&shpmu.Options{Backend: backend, Log: say})
	if err != nil {
		return err
	}
	defer ctx.Close() // closes every handle too
	if *list {
		return listEvents(ctx, out)
	}
	// Check the event once up front, so that a misspelt name is reported
	// as such rather than mistaken for a cgroup that vanished.
	if _, err := ctx.EventAttr(*event); errors.Is(err, syscall.ENOENT) {
		return eventNotFound{*event, err}
	} else if err != nil {
		return err
	}
	mount, err := ctx.CgroupRoot()
	if err != nil {
		return err
	}
	root, err := subtree(mount, *rootArg)
	if err != nil {
		return err
	}

	// On a terminal each refresh replaces the last; in a pipe they follow
	// one another so that a reader sees every block.
	clearScreen := false
	if f, ok := out.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			clearScreen = true
		}
	}

	cgroups := map[string]*cgroup{}
	last := time.Now()
	// sample brings the handles in line with the cgroups that exist now,
	// reads them all and gives each one's rate since the last sample.
	sample := func() ([]row, error) {
		paths, err := walk(root, *depth)
		if err != nil {
			return nil, err
		}
		for p, cg := range cgroups {
			if _, ok := paths[p]; !ok {
				cg.h.Close()
				delete(cgroups, p)
			}
		}
		for p := range paths {
			if cgroups[p] != nil {
				continue
			}
			h, err := ctx.OpenName(*event, shpmu.Cgroup(p))
			if err != nil {
				// Removed between the walk and the open: not an error.
				if _, serr := os.Stat(p); errors.Is(err, syscall.ENOENT) &&
					errors.Is(serr, fs.ErrNotExist) {
					continue
				}
				return nil, err
			}
			cgroups[p] = &cgroup{h: h}
		}
		order := make([]string, 0, len(cgroups))
		hs := make([]*shpmu.Handle, 0, len(cgroups))
		for p, cg := range cgroups {
			order = append(order, p)
			hs = append(hs, cg.h)
		}
		counts := make([]shpmu.Count, len(hs))
		if err := ctx.ReadMany(hs, counts); err != nil {
			return nil, err
		}
		now := time.Now()
		secs := now.Sub(last).Seconds()
		last = now
		rows := make([]row, len(order))
		for i, p := range order {
			cg, v := cgroups[p], counts[i].Scaled()
			rows[i] = row{path: p, rate: -1}
			// Scaled is an estimate when multiplexed, and may step back:
			// show 0 rather than a wrapped-around difference.
			if cg.read && v >= cg.prev {
				rows[i].rate = float64(v-cg.prev) / secs
			} else if cg.read {
				rows[i].rate = 0
			}
			cg.prev, cg.read = v, true
		}
		sort.Slice(rows, func(i, j int) bool {
			if rows[i].rate != rows[j].rate {
				return rows[i].rate > rows[j].rate
			}
			return rows[i].path < rows[j].path
		})
		return rows, nil
	}

	// A first reading that is not shown, so that the first refresh has
	// rates.
	if _, err := sample(); err != nil {
		return err
	}
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for n := 0; *count == 0 || n < *count; n++ {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		rows, err := sample()
		if err != nil {
			return err
		}
		if clearScreen {
			fmt.Fprint(out, "\033[H\033[2J")
		}
		show(out, *event, root, root == mount, rows, *top)
	}
	return nil
}

// listEvents writes the machine's events, one a line, as shpmu-stat
// --list does.
func listEvents(ctx *shpmu.Context, out io.Writer) error {
	return ctx.ListEvents(func(name, desc string) bool {
		fmt.Fprintf(out, "%-50s %s\n", name, desc)
		return true
	})
}

// subtree gives the directory -root names: a path below the cgroup mount
// as it is, any other taken under the mount, as perf's -G takes "/foo".
// Its errors give the full path tried.
func subtree(mount, arg string) (string, error) {
	dir := filepath.Clean(arg)
	if dir != mount && !strings.HasPrefix(dir, mount+"/") {
		dir = filepath.Join(mount, arg)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("-root %s: no cgroup %s (-root is a path under the cgroup mount %s)", arg, dir, mount)
	case err != nil:
		return "", fmt.Errorf("-root %s: %w", arg, err)
	case !fi.IsDir():
		return "", fmt.Errorf("-root %s: %s is not a cgroup directory", arg, dir)
	}
	return dir, nil
}

// walk gives the cgroups at root and up to depth levels below it. A
// cgroup removed while it walks is left out.
func walk(root string, depth int) (map[string]struct{}, error) {
	paths := map[string]struct{}{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil // a cgroup's control files
		}
		paths[p] = struct{}{}
		level := 0
		if p != root {
			level = strings.Count(p[len(root):], "/")
		}
		if level >= depth {
			return filepath.SkipDir // listed, but nothing below it
		}
		return nil
	})
	return paths, err
}

// show writes one refresh: a header, then the top rows with paths
// relative to root. task-clock counts nanoseconds, shown as CPU%. Where
// root is the root cgroup (atMount) it is not ranked: it holds every
// task, and for a clock every CPU's idle time, so it would top every
// refresh; it comes last, labelled.
func show(out io.Writer, event, root string, atMount bool, rows []row, top int) {
	unit, div := "EVENTS/S", 1.0
	if event == "task-clock" {
		unit, div = "CPU%", 1e7 // ns/s to percent of one CPU
	}
	fmt.Fprintf(out, "%s  %s  %d cgroups\n", time.Now().Format("15:04:05"),
		event, len(rows))
	fmt.Fprintf(out, "%12s  %s\n", unit, "CGROUP")
	var rootRow *row
	ranked := make([]row, 0, len(rows))
	for i := range rows {
		if atMount && rows[i].path == root {
			rootRow = &rows[i]
		} else {
			ranked = append(ranked, rows[i])
		}
	}
	if len(ranked) > top {
		ranked = ranked[:top]
	}
	for _, r := range ranked {
		rel, _ := filepath.Rel(root, r.path)
		fmt.Fprintf(out, "%12s  %s\n", rateText(r, div), rel)
	}
	if rootRow != nil {
		fmt.Fprintf(out, "%12s  / (the root cgroup, not ranked: %s)\n",
			rateText(*rootRow, div), rootHolds(event))
	}
	fmt.Fprintln(out)
}

// rateText is a row's rate in the unit shown, "-" before it has one.
func rateText(r row, div float64) string {
	if r.rate < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r.rate/div)
}

// rootHolds says what the root cgroup counts besides its cgroups' work.
func rootHolds(event string) string {
	if event == "task-clock" || event == "cpu-clock" {
		return "every task, and every CPU's idle time"
	}
	return "every task"
}
