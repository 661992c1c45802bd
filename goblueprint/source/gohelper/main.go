// Command gohelper turns Go source into plain JSON facts for goblueprint.
//
// It only parses and type-checks (go/parser, go/types): every judgement about
// state machines, call paths and diffs is made in Python over these facts.
// It is built with the bundled toolchain but reads any GOROOT, because it
// never compiles the code it reads.
//
// Modes:
//
//	gohelper facts -goroot DIR -pkg runtime -fields g.atomicstatus,p.status [-tooltags a,b]
//	gohelper parsecheck -goroot DIR
//	gohelper contracts -goroot DIR PKG...
//	gohelper rewrite -goroot DIR -pkg runtime -fields ... -spec FILE   (see rewrite.go)
//	gohelper knobs -goroot DIR -pkg runtime -spec FILE                 (see knobs.go)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: gohelper facts|parsecheck|contracts ...")
	}
	mode, args := os.Args[1], os.Args[2:]
	fl := flag.NewFlagSet(mode, flag.ExitOnError)
	goroot := fl.String("goroot", "", "GOROOT to read")
	pkg := fl.String("pkg", "runtime", "package import path")
	fields := fl.String("fields", "", "status fields as Type.field,...")
	toolTags := fl.String("tooltags", "", "build tool tags of the GOROOT's release")
	goos := fl.String("goos", "linux", "GOOS for file selection")
	goarch := fl.String("goarch", "amd64", "GOARCH for file selection")
	spec := fl.String("spec", "", "rewrite spec (JSON file)")
	_ = fl.Parse(args)
	if *goroot == "" {
		fail("-goroot is required")
	}
	ctx := buildContext(*goroot, *goos, *goarch, *toolTags)
	var out any
	switch mode {
	case "facts":
		out = factsMode(ctx, *pkg, splitList(*fields))
	case "parsecheck":
		out = parseCheck(*goroot)
	case "contracts":
		out = contractsMode(ctx, fl.Args())
	case "rewrite":
		out = rewriteMode(ctx, *pkg, splitList(*fields), *spec)
	case "knobs":
		out = knobsMode(ctx, *pkg, *spec)
	default:
		fail("unknown mode " + mode)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gohelper: "+msg)
	os.Exit(2)
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// buildContext selects files the way the target release would for GOOS/GOARCH.
func buildContext(goroot, goos, goarch, toolTags string) build.Context {
	ctx := build.Default
	ctx.GOROOT = goroot
	ctx.GOPATH = ""
	ctx.GOOS = goos
	ctx.GOARCH = goarch
	ctx.CgoEnabled = false
	ctx.Compiler = "gc"
	if toolTags != "" {
		ctx.ToolTags = splitList(toolTags)
	}
	return ctx
}

// srcImporter type-checks imported packages from the GOROOT's own source
// (declarations only), so that any release can be read without compiling it.
// It avoids go/importer, whose export-data readers would make the helper
// itself much slower to build.
type srcImporter struct {
	ctx  build.Context
	fset *token.FileSet
	pkgs map[string]*types.Package
	errs []string
}

func newSrcImporter(ctx build.Context, fset *token.FileSet) *srcImporter {
	return &srcImporter{ctx: ctx, fset: fset, pkgs: map[string]*types.Package{}}
}

func (s *srcImporter) Import(path string) (*types.Package, error) {
	return s.ImportFrom(path, "", 0)
}

func (s *srcImporter) ImportFrom(path, dir string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	bp, err := s.ctx.Import(path, dir, 0)
	if err != nil {
		return nil, err
	}
	key := bp.ImportPath // vendored std packages resolve to vendor/...
	if pkg, ok := s.pkgs[key]; ok {
		if pkg == nil {
			return nil, fmt.Errorf("import cycle through %s", key)
		}
		return pkg, nil
	}
	s.pkgs[key] = nil
	files := make([]*ast.File, 0, len(bp.GoFiles))
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(s.fset, filepath.Join(bp.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: s, FakeImportC: true, IgnoreFuncBodies: true, Error: func(err error) {
		if len(s.errs) < 50 {
			s.errs = append(s.errs, err.Error())
		}
	}}
	pkg, _ := conf.Check(key, s.fset, files, nil)
	s.pkgs[key] = pkg
	return pkg, nil
}

// ---------------------------------------------------------------- parsecheck

type parseReport struct {
	Files  int      `json:"files"`
	Errors []string `json:"errors"`
}

// parseCheck parses every non-testdata .go file under GOROOT/src.
func parseCheck(goroot string) parseReport {
	var paths []string
	src := filepath.Join(goroot, "src")
	_ = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != src && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			paths = append(paths, path)
		}
		return nil
	})
	errs := make([][]string, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fset := token.NewFileSet()
			_, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				rel, _ := filepath.Rel(goroot, p)
				errs[i] = append(errs[i], rel+": "+err.Error())
			}
		}()
	}
	wg.Wait()
	rep := parseReport{Files: len(paths), Errors: []string{}}
	for _, e := range errs {
		rep.Errors = append(rep.Errors, e...)
	}
	return rep
}

// ---------------------------------------------------------------- loading

type loaded struct {
	fset      *token.FileSet
	files     []*ast.File
	names     []string // GOROOT-relative paths, parallel to files
	sfiles    []string
	pkg       *types.Package
	info      *types.Info
	typeErrs  []string
	parseErrs []string
}

func load(ctx build.Context, path string) *loaded {
	bp, err := ctx.Import(path, "", 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); !ok {
			fail(fmt.Sprintf("cannot list package %s: %v", path, err))
		}
	}
	l := &loaded{fset: token.NewFileSet()}
	l.files = make([]*ast.File, len(bp.GoFiles))
	perr := make([]error, len(bp.GoFiles))
	var wg sync.WaitGroup
	for i, name := range bp.GoFiles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.files[i], perr[i] = parser.ParseFile(l.fset, filepath.Join(bp.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		}()
	}
	wg.Wait()
	var files []*ast.File
	for i, f := range l.files {
		if perr[i] != nil {
			l.parseErrs = append(l.parseErrs, perr[i].Error())
		}
		if f != nil {
			files = append(files, f)
		}
	}
	l.files = files
	for _, f := range l.files {
		l.names = append(l.names, rel(ctx.GOROOT, l.fset.Position(f.Pos()).Filename))
	}
	for _, s := range bp.SFiles {
		l.sfiles = append(l.sfiles, rel(ctx.GOROOT, filepath.Join(bp.Dir, s)))
	}
	l.info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{
		Importer:         newSrcImporter(ctx, l.fset),
		FakeImportC:      true,
		IgnoreFuncBodies: false,
		Error: func(err error) {
			if len(l.typeErrs) < 50 {
				l.typeErrs = append(l.typeErrs, err.Error())
			}
		},
	}
	// Runtime code uses compiler-only features (e.g. linknamed declarations without
	// bodies); go/types reports those as errors but still types the rest.
	l.pkg, _ = conf.Check(path, l.fset, l.files, l.info)
	return l
}

func rel(goroot, path string) string {
	r, err := filepath.Rel(goroot, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// ---------------------------------------------------------------- facts

type constFact struct {
	Name    string `json:"name"`
	Value   *int64 `json:"value"`
	Group   int    `json:"group"`
	Comment string `json:"comment"`
	File    string `json:"file"`
	Line    int    `json:"line"`
}

type callFact struct {
	Callee string `json:"callee"`
	Kind   string `json:"kind"` // call, go, defer, ref, systemstack, mcall
	Line   int    `json:"line"`
	Ctx    string `json:"ctx,omitempty"`
	Top    bool   `json:"top,omitempty"`
	Args   []any  `json:"args,omitempty"`
	// Guards hold where calls with integer arguments are made (for wrappers of status writes).
	Guards map[string]any `json:"guards,omitempty"`
}

type funcFact struct {
	Name       string      `json:"name"`
	File       string      `json:"file"`
	Line       int         `json:"line"`
	End        int         `json:"end"`
	Body       bool        `json:"body"`
	Params     []string    `json:"params"`
	Directives []string    `json:"directives"`
	Calls      []callFact  `json:"calls"`
	Ret        *originFact `json:"ret,omitempty"`
}

type siteFact struct {
	Field  string         `json:"field"`
	How    string         `json:"how"` // assign, call, method
	Callee string         `json:"callee,omitempty"`
	Ops    []any          `json:"ops"`
	Func   string         `json:"func"`
	File   string         `json:"file"`
	Line   int            `json:"line"`
	Ctx    string         `json:"ctx,omitempty"`
	Top    bool           `json:"top,omitempty"`
	Guards map[string]any `json:"guards,omitempty"`
	Subj   string         `json:"subj"`
	Obj    *originFact    `json:"obj,omitempty"`
}

type fieldFact struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Comment  string `json:"comment"`
	Embedded bool   `json:"embedded"`
	Line     int    `json:"line"`
}

type structFact struct {
	Name   string      `json:"name"`
	File   string      `json:"file"`
	Line   int         `json:"line"`
	Doc    string      `json:"doc"`
	Fields []fieldFact `json:"fields"`
}

type factsOut struct {
	Package     string        `json:"package"`
	Files       []string      `json:"files"`
	SFiles      []string      `json:"sfiles"`
	ParseErrors []string      `json:"parse_errors"`
	TypeErrors  []string      `json:"type_errors"`
	Consts      []constFact   `json:"consts"`
	Funcs       []funcFact    `json:"funcs"`
	Sites       []siteFact    `json:"sites"`
	Structs     []structFact  `json:"structs"`
	Literals    []literalFact `json:"literals"`
}

func factsMode(ctx build.Context, path string, fields []string) factsOut {
	l := load(ctx, path)
	out := factsOut{Package: path, Files: nonNil(l.names), SFiles: nonNil(l.sfiles),
		ParseErrors: nonNil(l.parseErrs), TypeErrors: nonNil(l.typeErrs),
		Consts: []constFact{}, Funcs: []funcFact{}, Sites: []siteFact{}, Structs: []structFact{}, Literals: []literalFact{}}
	want := map[string]bool{}
	for _, f := range fields {
		want[f] = true
	}
	for i, f := range l.files {
		fname := l.names[i]
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				l.genDecl(d, fname, &out)
			case *ast.FuncDecl:
				w := &funcWalker{l: l, decl: d, file: fname, want: want, name: funcName(d)}
				out.Funcs = append(out.Funcs, w.run())
				out.Sites = append(out.Sites, w.sites...)
				out.Literals = append(out.Literals, w.literals...)
			}
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (l *loaded) line(p token.Pos) int { return l.fset.Position(p).Line }

func commentText(groups ...*ast.CommentGroup) string {
	var parts []string
	for _, g := range groups {
		if g != nil {
			if t := strings.TrimSpace(g.Text()); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

func (l *loaded) genDecl(d *ast.GenDecl, fname string, out *factsOut) {
	switch d.Tok {
	case token.CONST:
		group := l.line(d.Pos())
		for _, spec := range d.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, id := range vs.Names {
				if id.Name == "_" {
					continue
				}
				cf := constFact{Name: id.Name, Group: group, File: fname, Line: l.line(id.Pos()),
					Comment: commentText(vs.Doc, vs.Comment)}
				if obj, ok := l.info.Defs[id].(*types.Const); ok {
					if v, exact := constant.Int64Val(constant.ToInt(obj.Val())); exact {
						cf.Value = &v
					}
				}
				out.Consts = append(out.Consts, cf)
			}
		}
	case token.TYPE:
		for _, spec := range d.Specs {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(d.Specs) == 1 {
				doc = d.Doc
			}
			sf := structFact{Name: ts.Name.Name, File: fname, Line: l.line(ts.Pos()), Doc: commentText(doc), Fields: []fieldFact{}}
			for _, fld := range st.Fields.List {
				typ := types.ExprString(fld.Type)
				cm := commentText(fld.Doc, fld.Comment)
				if len(fld.Names) == 0 {
					name := strings.TrimPrefix(typ, "*")
					if i := strings.LastIndex(name, "."); i >= 0 {
						name = name[i+1:]
					}
					sf.Fields = append(sf.Fields, fieldFact{Name: name, Type: typ, Comment: cm, Embedded: true, Line: l.line(fld.Pos())})
				}
				for _, n := range fld.Names {
					sf.Fields = append(sf.Fields, fieldFact{Name: n.Name, Type: typ, Comment: cm, Line: l.line(n.Pos())})
				}
			}
			out.Structs = append(out.Structs, sf)
		}
	}
}

// funcName writes methods as (*p).init or (syscallingThread).releaseP.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	return "(" + star + types.ExprString(t) + ")." + d.Name.Name
}

// objName names a function object the same way funcName names declarations.
func objName(fn *types.Func, home *types.Package) string {
	sig, _ := fn.Type().(*types.Signature)
	qual := func(p *types.Package) string {
		if p == home {
			return ""
		}
		return p.Name()
	}
	if sig != nil && sig.Recv() != nil {
		rt := sig.Recv().Type()
		star := ""
		if p, ok := rt.(*types.Pointer); ok {
			star, rt = "*", p.Elem()
		}
		name := types.TypeString(rt, qual)
		if i := strings.Index(name, "["); i >= 0 {
			name = name[:i]
		}
		return "(" + star + name + ")." + fn.Name()
	}
	if fn.Pkg() == nil || fn.Pkg() == home {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// ---------------------------------------------------------------- function walker

type funcWalker struct {
	l        *loaded
	decl     *ast.FuncDecl
	file     string
	name     string
	want     map[string]bool
	params   map[types.Object]int
	defs     map[types.Object][]ast.Expr // nil entry: some assignment is not knowable
	calls    []callFact
	sites    []siteFact
	literals []literalFact
	stack    []ast.Node // path from the FuncDecl to the current node
}

func (w *funcWalker) run() funcFact {
	d := w.decl
	ff := funcFact{Name: w.name, File: w.file, Line: w.l.line(d.Pos()), End: w.l.line(d.End()),
		Body: d.Body != nil, Params: []string{}, Directives: []string{}}
	if d.Doc != nil {
		for _, c := range d.Doc.List {
			if strings.HasPrefix(c.Text, "//go:") {
				ff.Directives = append(ff.Directives, strings.TrimPrefix(c.Text, "//"))
			}
		}
	}
	w.params = map[types.Object]int{}
	idx := 0
	for _, fld := range d.Type.Params.List {
		if len(fld.Names) == 0 {
			ff.Params = append(ff.Params, "_")
			idx++
		}
		for _, n := range fld.Names {
			if obj := w.l.info.Defs[n]; obj != nil {
				w.params[obj] = idx
			}
			ff.Params = append(ff.Params, n.Name)
			idx++
		}
	}
	if d.Body != nil {
		w.collectDefs()
		ast.Inspect(d, w.visit)
	}
	ff.Calls = w.calls
	if d.Body != nil {
		ff.Ret = w.returnOrigin()
	}
	if ff.Calls == nil {
		ff.Calls = []callFact{}
	}
	return ff
}

// collectDefs records, per local variable, every expression assigned to it.
func (w *funcWalker) collectDefs() {
	w.defs = map[types.Object][]ast.Expr{}
	unknown := map[types.Object]bool{}
	obj := func(id *ast.Ident) types.Object {
		if o := w.l.info.Defs[id]; o != nil {
			return o
		}
		return w.l.info.Uses[id]
	}
	ast.Inspect(w.decl.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok {
					continue
				}
				o := obj(id)
				if o == nil {
					continue
				}
				if len(s.Lhs) == len(s.Rhs) && (s.Tok == token.ASSIGN || s.Tok == token.DEFINE) {
					w.defs[o] = append(w.defs[o], s.Rhs[i])
				} else if len(s.Lhs) == len(s.Rhs) && s.Tok == token.OR_ASSIGN {
					w.defs[o] = append(w.defs[o], &ast.BinaryExpr{X: id, Op: token.OR, Y: s.Rhs[i]})
				} else {
					unknown[o] = true
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				o := obj(id)
				if o == nil {
					continue
				}
				if len(s.Values) == len(s.Names) {
					w.defs[o] = append(w.defs[o], s.Values[i])
				} else if len(s.Values) != 0 {
					unknown[o] = true
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{s.Key, s.Value} {
				if id, ok := e.(*ast.Ident); ok {
					if o := obj(id); o != nil {
						unknown[o] = true
					}
				}
			}
		case *ast.IncDecStmt:
			if id, ok := s.X.(*ast.Ident); ok {
				if o := obj(id); o != nil {
					unknown[o] = true
				}
			}
		case *ast.UnaryExpr:
			// Address taken: writes through the pointer are not tracked.
			if id, ok := s.X.(*ast.Ident); ok && s.Op == token.AND {
				if o := obj(id); o != nil {
					unknown[o] = true
				}
			}
		}
		return true
	})
	for o := range unknown {
		w.defs[o] = nil
	}
}

func (w *funcWalker) visit(n ast.Node) bool {
	if n == nil {
		w.stack = w.stack[:len(w.stack)-1]
		return false
	}
	w.stack = append(w.stack, n)
	switch x := n.(type) {
	case *ast.CallExpr:
		w.call(x)
	case *ast.CompositeLit:
		w.compositeLit(x)
	case *ast.AssignStmt:
		for i, lhs := range x.Lhs {
			if f := w.statusField(lhs); f != "" && len(x.Lhs) == len(x.Rhs) {
				w.addSite(f, "assign", "", lhs, []ast.Expr{x.Rhs[i]}, x.Pos())
			}
		}
	case *ast.Ident:
		// A function used as a value (passed to mcall, gopark, newm, ...).
		if fn, ok := w.l.info.Uses[x].(*types.Func); ok && !w.isCallee(x) {
			if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() == nil {
				kind := "ref"
				if len(w.stack) >= 2 {
					if call, ok := w.stack[len(w.stack)-2].(*ast.CallExpr); ok {
						if k := closureKind(call); k != "" {
							kind = k
						}
					}
				}
				w.calls = append(w.calls, callFact{Callee: objName(fn, w.l.pkg), Kind: kind,
					Line: w.l.line(x.Pos()), Ctx: w.ctx()})
			}
		}
	}
	return true
}

// isCallee reports whether the identifier on top of the stack is the called function.
func (w *funcWalker) isCallee(id *ast.Ident) bool {
	if len(w.stack) < 2 {
		return false
	}
	parent := w.stack[len(w.stack)-2]
	switch p := parent.(type) {
	case *ast.CallExpr:
		return p.Fun == id
	case *ast.SelectorExpr:
		if p.Sel == id && len(w.stack) >= 3 {
			if c, ok := w.stack[len(w.stack)-3].(*ast.CallExpr); ok && c.Fun == p {
				return true
			}
		}
		return false
	case *ast.IndexExpr, *ast.IndexListExpr:
		if len(w.stack) >= 3 {
			if c, ok := w.stack[len(w.stack)-3].(*ast.CallExpr); ok && c.Fun == parent {
				return true
			}
		}
	}
	return false
}

// closureKind says how a function value passed to this call runs.
func closureKind(call *ast.CallExpr) string {
	switch name := callName(call.Fun); name {
	case "systemstack", "mcall":
		return name
	}
	return ""
}

func callName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.IndexExpr:
		return callName(f.X)
	case *ast.IndexListExpr:
		return callName(f.X)
	case *ast.ParenExpr:
		return callName(f.X)
	}
	return ""
}

// ctx is the kind of the innermost function literal around the current node.
func (w *funcWalker) ctx() string {
	for i := len(w.stack) - 1; i >= 1; i-- {
		lit, ok := w.stack[i].(*ast.FuncLit)
		if !ok {
			continue
		}
		switch p := w.stack[i-1].(type) {
		case *ast.CallExpr:
			if p.Fun == lit {
				if i >= 2 {
					switch w.stack[i-2].(type) {
					case *ast.GoStmt:
						return "go"
					case *ast.DeferStmt:
						return "defer"
					}
				}
				return "closure"
			}
			if k := closureKind(p); k != "" {
				return k
			}
		}
		return "closure"
	}
	return ""
}

// top reports whether the current node belongs to a statement of the function body itself.
func (w *funcWalker) top() bool {
	// stack[0] is the FuncDecl, stack[1] its BlockStmt, stack[2] a top-level statement.
	if len(w.stack) < 3 || w.stack[1] != w.decl.Body {
		return false
	}
	for _, n := range w.stack[3:] {
		switch n.(type) {
		case *ast.FuncLit, *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			return false
		}
	}
	switch w.stack[2].(type) {
	case *ast.ExprStmt, *ast.AssignStmt, *ast.ReturnStmt, *ast.DeclStmt:
	default:
		return false
	}
	// A top-level statement runs on every call only if no earlier statement may return.
	for _, st := range w.decl.Body.List {
		if st == w.stack[2] {
			return true
		}
		if mayReturn(st) {
			return false
		}
	}
	return false
}

func mayReturn(st ast.Stmt) bool {
	found := false
	ast.Inspect(st, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			found = true
		case *ast.BranchStmt:
			if n.(*ast.BranchStmt).Tok == token.GOTO {
				found = true
			}
		}
		return !found
	})
	return found
}

func (w *funcWalker) call(c *ast.CallExpr) {
	callee := ""
	var sig *types.Signature
	var fnObj *types.Func
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		fnObj, _ = w.l.info.Uses[f].(*types.Func)
	case *ast.SelectorExpr:
		fnObj, _ = w.l.info.Uses[f.Sel].(*types.Func)
	case *ast.IndexExpr:
		fnObj, _ = w.l.info.Uses[identOf(f.X)].(*types.Func)
	case *ast.IndexListExpr:
		fnObj, _ = w.l.info.Uses[identOf(f.X)].(*types.Func)
	}
	if fnObj != nil {
		callee = objName(fnObj, w.l.pkg)
		sig, _ = fnObj.Type().(*types.Signature)
	} else if tv, ok := w.l.info.Types[c.Fun]; ok && tv.IsType() {
		return // a conversion
	} else if id, ok := c.Fun.(*ast.Ident); ok {
		if _, isBuiltin := w.l.info.Uses[id].(*types.Builtin); isBuiltin {
			return
		}
		callee = types.ExprString(c.Fun)
	} else {
		callee = types.ExprString(c.Fun)
	}
	kind := "call"
	if len(w.stack) >= 2 {
		switch p := w.stack[len(w.stack)-2].(type) {
		case *ast.GoStmt:
			if p.Call == c {
				kind = "go"
			}
		case *ast.DeferStmt:
			if p.Call == c {
				kind = "defer"
			}
		}
	}
	cf := callFact{Callee: callee, Kind: kind, Line: w.l.line(c.Pos()), Ctx: w.ctx(), Top: w.top()}
	if sig != nil && fnObj.Pkg() == w.l.pkg && hasIntParam(sig) {
		for i, a := range c.Args {
			if i < sig.Params().Len() && isInt(sig.Params().At(i).Type()) {
				cf.Args = append(cf.Args, w.enc(a, 0))
			} else {
				cf.Args = append(cf.Args, nil)
			}
		}
		if g := w.guards(); len(g) > 0 {
			cf.Guards = map[string]any{}
			for k, c := range g {
				cf.Guards[k] = c.json()
			}
		}
	}
	w.calls = append(w.calls, cf)

	// Status writes through calls: atomic.Store(&pp.status, v), gp.atomicstatus.CompareAndSwap(o, n).
	if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok {
		if f := w.statusField(sel.X); f != "" {
			w.addSite(f, "method", sel.Sel.Name, sel.X, c.Args, c.Pos())
			return
		}
	}
	for i, a := range c.Args {
		if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND {
			if f := w.statusField(u.X); f != "" {
				ops := append(append([]ast.Expr{}, c.Args[:i]...), c.Args[i+1:]...)
				w.addSite(f, "call", types.ExprString(c.Fun), u.X, ops, c.Pos())
				return
			}
		}
	}
}

func identOf(e ast.Expr) *ast.Ident {
	switch x := e.(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	return nil
}

func hasIntParam(sig *types.Signature) bool {
	for i := 0; i < sig.Params().Len(); i++ {
		if isInt(sig.Params().At(i).Type()) {
			return true
		}
	}
	return false
}

func isInt(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// statusField names e as "T.field" when it selects one of the wanted status fields.
func (w *funcWalker) statusField(e ast.Expr) string {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	s := w.l.info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return ""
	}
	t := s.Recv()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() != w.l.pkg {
		return ""
	}
	f := named.Obj().Name() + "." + sel.Sel.Name
	if w.want[f] {
		return f
	}
	return ""
}

func (w *funcWalker) addSite(field, how, callee string, subj ast.Expr, ops []ast.Expr, pos token.Pos) {
	sf := siteFact{Field: field, How: how, Callee: callee, Func: w.name, File: w.file,
		Line: w.l.line(pos), Ctx: w.ctx(), Top: w.top(), Subj: types.ExprString(subj), Ops: []any{},
		Obj: w.objectOrigin(subj)}
	for _, o := range ops {
		sf.Ops = append(sf.Ops, w.enc(o, 0))
	}
	if g := w.guards(); len(g) > 0 {
		sf.Guards = map[string]any{}
		for k, c := range g {
			sf.Guards[k] = c.json()
		}
	}
	w.sites = append(w.sites, sf)
}

// ---------------------------------------------------------------- operand encoding

// enc encodes an operand as a small tree Python can evaluate:
// {"c": name, "v": int} constant, {"p": i, "n": name} parameter,
// {"var": name, "defs": [...]|null} local, {"op", "x", "y"} arithmetic, {"u": text} unknown.
func (w *funcWalker) enc(e ast.Expr, depth int) any {
	e = ast.Unparen(e)
	if tv, ok := w.l.info.Types[e]; ok && tv.Value != nil {
		if v, exact := constant.Int64Val(constant.ToInt(tv.Value)); exact {
			m := map[string]any{"v": v}
			switch x := e.(type) {
			case *ast.Ident:
				m["c"] = x.Name
			case *ast.SelectorExpr:
				m["c"] = x.Sel.Name
			}
			return m
		}
	}
	switch x := e.(type) {
	case *ast.Ident:
		obj := w.l.info.Uses[x]
		if obj == nil {
			obj = w.l.info.Defs[x]
		}
		if v, ok := obj.(*types.Var); ok {
			if i, ok := w.params[v]; ok {
				return map[string]any{"p": i, "n": x.Name}
			}
			defs, known := w.defs[v]
			out := map[string]any{"var": x.Name, "defs": nil}
			if known && defs != nil && depth < 4 {
				var enc []any
				for _, d := range defs {
					enc = append(enc, w.enc(d, depth+1))
				}
				out["defs"] = enc
			}
			return out
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.OR, token.AND, token.AND_NOT, token.ADD, token.SUB:
			return map[string]any{"op": x.Op.String(), "x": w.enc(x.X, depth), "y": w.enc(x.Y, depth)}
		}
	}
	return map[string]any{"u": types.ExprString(e)}
}

// ---------------------------------------------------------------- guards

// constraint says what is known about one expression (keyed by its source text).
type constraint struct {
	in    map[int64]string // nil: unconstrained
	notin map[int64]string
}

func (c *constraint) json() map[string]any {
	m := map[string]any{}
	if c.in != nil {
		m["in"] = valList(c.in)
	}
	if len(c.notin) > 0 {
		m["notin"] = valList(c.notin)
	}
	return m
}

func valList(m map[int64]string) []any {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := []any{}
	for _, k := range keys {
		e := map[string]any{"v": k}
		if m[k] != "" {
			e["c"] = m[k]
		}
		out = append(out, e)
	}
	return out
}

type facts map[string]*constraint

func (f facts) get(k string) *constraint {
	c := f[k]
	if c == nil {
		c = &constraint{notin: map[int64]string{}}
		f[k] = c
	}
	return c
}

// and combines two facts that both hold.
func (f facts) and(g facts) facts {
	out := facts{}
	for _, src := range []facts{f, g} {
		for k, c := range src {
			d := out.get(k)
			if c.in != nil {
				if d.in == nil {
					d.in = copyVals(c.in)
				} else {
					for v := range d.in {
						if _, ok := c.in[v]; !ok {
							delete(d.in, v)
						}
					}
				}
			}
			for v, n := range c.notin {
				d.notin[v] = n
			}
		}
	}
	return out
}

// or keeps only what holds on either side.
func (f facts) or(g facts) facts {
	out := facts{}
	for k, a := range f {
		b, ok := g[k]
		if !ok {
			continue
		}
		d := &constraint{notin: map[int64]string{}}
		if a.in != nil && b.in != nil {
			d.in = copyVals(a.in)
			for v, n := range b.in {
				d.in[v] = n
			}
		}
		for v, n := range a.notin {
			if _, ok := b.notin[v]; ok {
				d.notin[v] = n
			}
		}
		if d.in != nil || len(d.notin) > 0 {
			out[k] = d
		}
	}
	return out
}

func copyVals(m map[int64]string) map[int64]string {
	out := map[int64]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (w *funcWalker) constVal(e ast.Expr) (int64, string, bool) {
	e = ast.Unparen(e)
	tv, ok := w.l.info.Types[e]
	if !ok || tv.Value == nil {
		return 0, "", false
	}
	v, exact := constant.Int64Val(constant.ToInt(tv.Value))
	if !exact {
		return 0, "", false
	}
	name := ""
	switch x := e.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	}
	return v, name, true
}

// cond derives facts from a condition known to be truth.
func (w *funcWalker) cond(e ast.Expr, truth bool) facts {
	switch x := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			return w.cond(x.X, !truth)
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR:
			a, b := w.cond(x.X, truth), w.cond(x.Y, truth)
			if (x.Op == token.LAND) == truth {
				return a.and(b)
			}
			return a.or(b)
		case token.EQL, token.NEQ:
			subj, val := x.X, x.Y
			v, name, ok := w.constVal(val)
			if !ok {
				subj, val = x.Y, x.X
				v, name, ok = w.constVal(val)
			}
			if !ok {
				return facts{}
			}
			if _, _, isConst := w.constVal(subj); isConst {
				return facts{}
			}
			f := facts{}
			c := f.get(types.ExprString(ast.Unparen(subj)))
			if (x.Op == token.EQL) == truth {
				c.in = map[int64]string{v: name}
			} else {
				c.notin[v] = name
			}
			return f
		}
	}
	return facts{}
}

// guards collects facts that hold at the current node: enclosing if/switch
// branches, and earlier checks in enclosing blocks that throw or return.
func (w *funcWalker) guards() facts {
	acc := facts{}
	for i := 1; i < len(w.stack); i++ {
		parent, child := w.stack[i-1], w.stack[i]
		if _, ok := parent.(*ast.FuncLit); ok {
			continue
		}
		switch p := parent.(type) {
		case *ast.IfStmt:
			if child == p.Body {
				acc = acc.and(w.cond(p.Cond, true))
			} else if child == p.Else {
				acc = acc.and(w.cond(p.Cond, false))
			}
		case *ast.BlockStmt:
			for _, st := range p.List {
				if st == child {
					break
				}
				if ifs, ok := st.(*ast.IfStmt); ok && ifs.Else == nil && terminates(ifs.Body) {
					acc = acc.and(w.cond(ifs.Cond, false))
				}
			}
		case *ast.BinaryExpr:
			// In `a && f()` f runs only when a holds; in `a || f()` only when it does not.
			if child == p.Y && (p.Op == token.LAND || p.Op == token.LOR) {
				acc = acc.and(w.cond(p.X, p.Op == token.LAND))
			}
		}
		if cc, ok := child.(*ast.CaseClause); ok && i >= 2 {
			if sw, ok := w.stack[i-2].(*ast.SwitchStmt); ok {
				acc = acc.and(w.caseFacts(sw, cc))
			}
		}
	}
	return acc
}

func (w *funcWalker) caseFacts(sw *ast.SwitchStmt, cc *ast.CaseClause) facts {
	if sw.Tag == nil {
		if len(cc.List) == 0 {
			return facts{}
		}
		f := w.cond(cc.List[0], true)
		for _, e := range cc.List[1:] {
			f = f.or(w.cond(e, true))
		}
		return f
	}
	key := types.ExprString(ast.Unparen(sw.Tag))
	f := facts{}
	c := f.get(key)
	if cc.List == nil { // default: none of the other cases
		for _, st := range sw.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				if v, n, ok := w.constVal(e); ok {
					c.notin[v] = n
				}
			}
		}
		return f
	}
	c.in = map[int64]string{}
	for _, e := range cc.List {
		v, n, ok := w.constVal(e)
		if !ok {
			return facts{}
		}
		c.in[v] = n
	}
	return f
}

// terminates reports whether a block never falls through: it returns, or
// calls throw/fatal/panic (directly or in a systemstack closure).
func terminates(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	switch last := b.List[len(b.List)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return last.Tok == token.CONTINUE || last.Tok == token.BREAK || last.Tok == token.GOTO
	}
	found := false
	ast.Inspect(b, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch callName(c.Fun) {
			case "throw", "fatal", "panic", "badsystemstack":
				found = true
			}
		}
		return !found
	})
	return found
}

// ---------------------------------------------------------------- contracts

type ifaceFact struct {
	Name     string   `json:"name"`
	Package  string   `json:"package"`
	Declared []string `json:"declared"`
	Embedded []string `json:"embedded"`
	Methods  []string `json:"methods"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
}

type implFact struct {
	Type       string   `json:"type"`
	Kind       string   `json:"kind"` // interface or concrete
	Implements []string `json:"implements"`
	ViaPointer []string `json:"via_pointer"`
}

type contractsOut struct {
	Packages   []string    `json:"packages"`
	Interfaces []ifaceFact `json:"interfaces"`
	Types      []implFact  `json:"types"`
	TypeErrors []string    `json:"type_errors"`
}

func contractsMode(ctx build.Context, paths []string) contractsOut {
	out := contractsOut{Packages: paths, Interfaces: []ifaceFact{}, Types: []implFact{}, TypeErrors: []string{}}
	var named []*types.TypeName
	var ifaces []*types.TypeName
	seenPkg := map[*types.Package]bool{}
	seenIface := map[string]bool{}
	// One importer for all listed packages, so that io imported by net and io listed
	// are the same package and method signatures compare equal.
	fset := token.NewFileSet()
	imp := newSrcImporter(ctx, fset)
	for _, path := range paths {
		pkg, err := imp.Import(path)
		if err != nil {
			fail(fmt.Sprintf("cannot load package %s: %v", path, err))
		}
		// Interfaces of the package and of its direct imports are candidates.
		for _, p := range append([]*types.Package{pkg}, pkg.Imports()...) {
			if seenPkg[p] {
				continue
			}
			seenPkg[p] = true
			for _, n := range p.Scope().Names() {
				tn, ok := p.Scope().Lookup(n).(*types.TypeName)
				if !ok || !tn.Exported() {
					continue
				}
				key := p.Path() + "." + tn.Name()
				if types.IsInterface(tn.Type()) && !seenIface[key] {
					seenIface[key] = true
					ifaces = append(ifaces, tn)
				}
			}
		}
		for _, n := range pkg.Scope().Names() {
			tn, ok := pkg.Scope().Lookup(n).(*types.TypeName)
			if !ok || !tn.Exported() {
				continue
			}
			named = append(named, tn)
			if it, ok := tn.Type().Underlying().(*types.Interface); ok {
				f := ifaceFact{Name: tn.Pkg().Name() + "." + tn.Name(), Package: tn.Pkg().Path(),
					Declared: []string{}, Embedded: []string{}, Methods: []string{},
					File: rel(ctx.GOROOT, fset.Position(tn.Pos()).Filename), Line: fset.Position(tn.Pos()).Line}
				for i := 0; i < it.NumExplicitMethods(); i++ {
					f.Declared = append(f.Declared, it.ExplicitMethod(i).Name())
				}
				for i := 0; i < it.NumEmbeddeds(); i++ {
					f.Embedded = append(f.Embedded, types.TypeString(it.EmbeddedType(i), pkgName))
				}
				for i := 0; i < it.NumMethods(); i++ {
					f.Methods = append(f.Methods, it.Method(i).Name())
				}
				out.Interfaces = append(out.Interfaces, f)
			}
		}
	}
	out.TypeErrors = nonNil(imp.errs)
	for _, tn := range named {
		t := tn.Type()
		if _, isGeneric := t.(*types.Named); isGeneric && t.(*types.Named).TypeParams().Len() > 0 {
			continue
		}
		f := implFact{Type: tn.Pkg().Name() + "." + tn.Name(), Kind: "concrete", Implements: []string{}, ViaPointer: []string{}}
		isIface := types.IsInterface(t)
		if isIface {
			f.Kind = "interface"
		}
		for _, in := range ifaces {
			if in == tn {
				continue
			}
			it := in.Type().Underlying().(*types.Interface)
			if it.NumMethods() == 0 || !it.IsMethodSet() {
				continue
			}
			name := in.Pkg().Name() + "." + in.Name()
			if types.Implements(t, it) {
				f.Implements = append(f.Implements, name)
			} else if !isIface && types.Implements(types.NewPointer(t), it) {
				f.ViaPointer = append(f.ViaPointer, name)
			}
		}
		if len(f.Implements) > 0 || len(f.ViaPointer) > 0 {
			out.Types = append(out.Types, f)
		}
	}
	return out
}

func pkgName(p *types.Package) string { return p.Name() }
