// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package readme checks the README's table of C calls and their Go
// counterparts against the binding's source: a reader copies those
// signatures, so each must be the binding's own. It parses the source
// and needs no cgo, no library and no privileges.
package readme

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"strings"
	"testing"
)

const (
	readmePath = "../../../../README.md"
	sourceDir  = "../../shpmu"
)

// A function or method of the binding, as its source declares it.
type decl struct {
	recv    string   // "Context" for (*Context), "Count" for Count; "" for a function
	params  []string // "name type" for each parameter, one per name
	results []string // the types
}

// The exported functions and methods of the binding, by name (a method
// may share its name with another's), and every other exported name
// (types, fields, constants and variables).
func parseBinding(t *testing.T) (map[string][]decl, map[string]bool) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, sourceDir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatalf("parsing %s: %v", sourceDir, err)
	}
	funcs := map[string][]decl{}
	names := map[string]bool{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					funcs[d.Name.Name] = append(funcs[d.Name.Name], declOf(d))
				case *ast.GenDecl:
					ast.Inspect(d, func(n ast.Node) bool {
						if id, ok := n.(*ast.Ident); ok && id.IsExported() {
							names[id.Name] = true
						}
						return true
					})
				}
			}
		}
	}
	return funcs, names
}

func declOf(d *ast.FuncDecl) decl {
	var out decl
	if d.Recv != nil {
		out.recv = strings.TrimPrefix(types.ExprString(d.Recv.List[0].Type), "*")
	}
	for _, p := range d.Type.Params.List {
		typ := types.ExprString(p.Type)
		for _, n := range p.Names {
			out.params = append(out.params, n.Name+" "+typ)
		}
		if len(p.Names) == 0 {
			out.params = append(out.params, " "+typ)
		}
	}
	if d.Type.Results != nil {
		for _, r := range d.Type.Results.List {
			typ := types.ExprString(r.Type)
			for range r.Names {
				out.results = append(out.results, typ)
			}
			if len(r.Names) == 0 {
				out.results = append(out.results, typ)
			}
		}
	}
	return out
}

// The Go column of the table that follows "| C | Go |".
func goColumn(t *testing.T) []string {
	f, err := os.Open(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cells []string
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		switch {
		case line == "| C | Go |":
			in = true
		case in && strings.HasPrefix(line, "| ---"):
		case in && strings.HasPrefix(line, "|"):
			cols := strings.Split(strings.Trim(line, "|"), " | ")
			cells = append(cells, cols[len(cols)-1])
		case in:
			in = false
		}
	}
	if len(cells) == 0 {
		t.Fatalf("%s: no table under \"| C | Go |\"", readmePath)
	}
	return cells
}

// A signature as the table writes one: (*Recv).Name, Recv.Name, Name,
// each with (params) and results or not.
var sigRE = regexp.MustCompile(`^(?:\(\*?([A-Z]\w*)\)\.|([A-Z]\w*)\.)?([A-Z]\w*)(?:\((.*?)\)(?: (.+))?)?$`)

// How the table writes a parameter: its name, its type, "func" for a
// func-typed one, or "..." for those it leaves out.
func paramMatches(written, declared string) bool {
	name, typ, _ := strings.Cut(declared, " ")
	return written == name || written == typ ||
		(written == "func" && strings.HasPrefix(typ, "func("))
}

func resultsOf(d decl) string {
	switch len(d.results) {
	case 0:
		return ""
	case 1:
		return d.results[0]
	}
	return "(" + strings.Join(d.results, ", ") + ")"
}

// Whether written, the table's (params) and results, fits d; the
// results must be written wherever d returns more than an error.
func fits(d decl, params, results string, called bool) string {
	if !called {
		return ""
	}
	want := resultsOf(d)
	if params != "" {
		written := strings.Split(params, ", ")
		if written[0] == "..." {
			if len(written)-1 > len(d.params) {
				return "more parameters than " + strings.Join(d.params, ", ")
			}
		} else if len(written) != len(d.params) {
			return "parameters (" + params + "), declared (" + strings.Join(d.params, ", ") + ")"
		} else {
			for i, w := range written {
				if !paramMatches(w, d.params[i]) {
					return "parameter " + w + ", declared " + d.params[i]
				}
			}
		}
	} else if len(d.params) != 0 {
		return "no parameters written, declared (" + strings.Join(d.params, ", ") + ")"
	}
	if results != want && !(results == "" && want == "error") {
		return "results \"" + results + "\", declared \"" + want + "\""
	}
	return ""
}

func TestTheGoTableNamesTheBindingsSignatures(t *testing.T) {
	funcs, names := parseBinding(t)
	span := regexp.MustCompile("`([^`]+)`")
	checked := 0
	for _, cell := range goColumn(t) {
		recv := ""
		for _, m := range span.FindAllStringSubmatch(cell, -1) {
			text := m[1]
			if strings.HasPrefix(text, "errors.") {
				continue // the standard library's
			}
			text = strings.TrimPrefix(text, "*") // a pointer type
			sig := sigRE.FindStringSubmatch(text)
			if sig == nil {
				t.Errorf("%q: not a signature this test reads", m[1])
				continue
			}
			if sig[1] != "" || sig[2] != "" {
				recv = sig[1] + sig[2]
			}
			// (Written with its parameters, not only named.)
			name, called := sig[3], strings.HasSuffix(text, ")") ||
				sig[5] != ""
			ds := funcs[name]
			if len(ds) == 0 {
				if called || !names[name] {
					t.Errorf("%q: the binding has no %s", m[1], name)
				}
				continue
			}
			// A receiver written here must be the declaration's; the
			// one the row began with picks among methods of one name.
			written := sig[1] != "" || sig[2] != ""
			var why string
			matched := false
			for _, d := range ds {
				if recv != "" && d.recv != recv && (written || (d.recv != "" && len(ds) > 1)) {
					continue
				}
				matched = true
				if why = fits(d, sig[4], sig[5], called); why == "" {
					break
				}
			}
			if !matched {
				t.Errorf("%q: the binding has no %s on %s", m[1], name, recv)
			} else if why != "" {
				t.Errorf("%q: %s", m[1], why)
			}
			checked++
		}
	}
	if checked < 30 {
		t.Errorf("only %d signatures checked: is the table still there?", checked)
	}
}
