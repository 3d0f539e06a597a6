// Package apicheck records a module's exported API as text, one feature a
// line, in the manner of the Go distribution's api/ files, and finds the
// incompatible changes between a record and the code.
//
// A feature is one exported thing a program can depend on: a constant
// with its type and value, a variable with its type, a function with its
// signature, a type with its kind, each exported field of a struct, each
// method of an interface, each method in a type's method set. Removing or
// changing a feature breaks programs that used it; adding one does not.
// The features are read from the compiler's export data (go list -export),
// so the standard library is all this package needs.
package apicheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	DepOnly    bool
	Error      *struct{ Err string }
}

// Features returns the exported API of the packages that patterns match,
// run from dir as the go command would (so a go.work there applies),
// sorted. Internal packages and commands are not API and are left out.
func Features(ctx context.Context, dir string, patterns ...string) ([]string, error) {
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Name,Export,DepOnly,Error"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apicheck: go %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	var targets []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("apicheck: reading go list's output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("apicheck: package %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Name != "main" && !internal(p.ImportPath) {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("apicheck: no export data for %s", path)
		}
		return os.Open(f)
	})
	var features []string
	for _, t := range targets {
		pkg, err := imp.Import(t.ImportPath)
		if err != nil {
			return nil, fmt.Errorf("apicheck: reading the export data of %s: %w", t.ImportPath, err)
		}
		features = append(features, packageFeatures(pkg)...)
	}
	sort.Strings(features)
	return slices.Compact(features), nil
}

func internal(path string) bool {
	for _, elem := range strings.Split(path, "/") {
		if elem == "internal" {
			return true
		}
	}
	return false
}

// packageFeatures lists the features of one package.
func packageFeatures(pkg *types.Package) []string {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Path()
	}
	str := func(t types.Type) string { return types.TypeString(t, qual) }
	prefix := "pkg " + pkg.Path() + ", "
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, str(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, str(obj.Type()))
		case *types.Func:
			add("func %s%s", name, strings.TrimPrefix(str(obj.Type()), "func"))
		case *types.TypeName:
			out = append(out, typeFeatures(prefix, obj, str)...)
		}
	}
	return out
}

// typeFeatures lists the features of an exported type: its kind, its
// exported fields or interface methods, and its exported methods.
func typeFeatures(prefix string, obj *types.TypeName, str func(types.Type) string) []string {
	name := obj.Name()
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	if obj.IsAlias() {
		add("type %s = %s", name, str(types.Unalias(obj.Type())))
		return out
	}
	named, _ := obj.Type().(*types.Named)
	tparams := ""
	if named != nil && named.TypeParams().Len() > 0 {
		var ps []string
		for i := range named.TypeParams().Len() {
			p := named.TypeParams().At(i)
			ps = append(ps, p.Obj().Name()+" "+str(p.Constraint()))
		}
		tparams = "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := obj.Type().Underlying().(type) {
	case *types.Struct:
		add("type %s%s struct", name, tparams)
		for f := range u.Fields() {
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add("type %s struct, embedded %s", name, str(f.Type()))
			} else {
				add("type %s struct, %s %s", name, f.Name(), str(f.Type()))
			}
		}
	case *types.Interface:
		var ms []string
		for m := range u.Methods() {
			ms = append(ms, m.Name())
			if m.Exported() {
				add("type %s interface, %s%s", name, m.Name(), strings.TrimPrefix(str(m.Type()), "func"))
			}
		}
		sort.Strings(ms)
		add("type %s%s interface { %s }", name, tparams, strings.Join(ms, ", "))
		return out
	default:
		add("type %s%s %s", name, tparams, str(u))
	}
	for _, recv := range []types.Type{obj.Type(), types.NewPointer(obj.Type())} {
		ms := types.NewMethodSet(recv)
		for sel := range ms.Methods() {
			m := sel.Obj()
			if !m.Exported() {
				continue
			}
			if _, ptr := recv.(*types.Pointer); ptr && types.NewMethodSet(obj.Type()).Lookup(m.Pkg(), m.Name()) != nil {
				continue // listed once, on the value receiver
			}
			r := name
			if _, ptr := recv.(*types.Pointer); ptr {
				r = "*" + name
			}
			add("method (%s) %s%s", r, m.Name(), strings.TrimPrefix(str(m.Type()), "func"))
		}
	}
	return out
}

// Read reads a record: one feature a line; blank lines and lines that
// begin with # are ignored.
func Read(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

// Diff compares a record with the features found now: removed are the
// recorded features that are gone or changed (an incompatible change),
// added the features not recorded yet.
func Diff(recorded, now []string) (removed, added []string) {
	rec := make(map[string]bool, len(recorded))
	for _, f := range recorded {
		rec[f] = true
	}
	cur := make(map[string]bool, len(now))
	for _, f := range now {
		cur[f] = true
		if !rec[f] {
			added = append(added, f)
		}
	}
	for _, f := range recorded {
		if !cur[f] {
			removed = append(removed, f)
		}
	}
	sort.Strings(removed)
	sort.Strings(added)
	return removed, added
}

// Check compares the API of the packages patterns match (from dir) with
// the record in the file record. Features the record has and the code no
// longer has are an incompatible change: Check fails unless each is
// announced, a line of the file announced. Features the code has and the
// record does not are new API: Check fails until the record is updated,
// so that every change of the API shows in a review. With update, Check
// rewrites the record instead (still refusing unannounced removals).
func Check(ctx context.Context, dir, record, announced string, update bool, patterns ...string) error {
	now, err := Features(ctx, dir, patterns...)
	if err != nil {
		return err
	}
	var recorded, ok []string
	if b, err := os.ReadFile(record); err == nil {
		if recorded, err = Read(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("apicheck: reading %s: %w", record, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) || !update {
		return fmt.Errorf("apicheck: %w", err)
	}
	if b, err := os.ReadFile(announced); err == nil {
		if ok, err = Read(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("apicheck: reading %s: %w", announced, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("apicheck: %w", err)
	}
	removed, added := Diff(recorded, now)
	var unannounced []string
	for _, f := range removed {
		if !slices.Contains(ok, f) {
			unannounced = append(unannounced, f)
		}
	}
	var msg strings.Builder
	if len(unannounced) > 0 {
		fmt.Fprintf(&msg, "%d incompatible API changes not announced (removed or changed since %s):\n\t%s\n"+
			"Try: keep them, or announce each line in %s with the reason above it (CONTRIBUTING.md, \"Compatibility\"), then update the record.\n",
			len(unannounced), record, strings.Join(unannounced, "\n\t"), announced)
	}
	if update {
		if msg.Len() > 0 {
			return errors.New(msg.String())
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# The exported API, one feature a line (internal/apicheck). Regenerate, never edit.\n")
		for _, f := range now {
			b.WriteString(f + "\n")
		}
		if err := os.WriteFile(record, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("apicheck: %w", err)
		}
		return nil
	}
	if len(added) > 0 {
		fmt.Fprintf(&msg, "%d API features not in %s:\n\t%s\n", len(added), record, strings.Join(added, "\n\t"))
	}
	if msg.Len() > 0 {
		fmt.Fprintf(&msg, "Try: review the change, then record it: go test -run '^TestAPI$' . -update-api (in the module that holds %s)", record)
		return errors.New(msg.String())
	}
	return nil
}
