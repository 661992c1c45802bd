// Rewrite mode: instrument the runtime for `goblueprint lab`.
//
//	gohelper rewrite -goroot DIR -pkg runtime -fields g.atomicstatus,p.status -spec spec.json
//
// The spec names status write sites (as `facts` reported them: field, how,
// callee, file, line) and function entries. Each site is found again in the
// type-checked AST (the same statusField test as `facts`), and its node is
// replaced by a call of a recording function of the lab's runtime file.
// Edits are spliced at the nodes' byte offsets and keep the original text of
// every operand that is evaluated once, so every line of the file keeps its
// number: the binary's line tables still name the release's own file:line.
// The output is checked to parse again before it is handed back.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"os"
	"sort"
	"strconv"
	"strings"
)

type rewriteSite struct {
	ID     int    `json:"id"`
	Field  string `json:"field"`
	How    string `json:"how"`
	Callee string `json:"callee"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"` // cas, store
	// CallerPC: pass the caller's PC (the site is in a wrapper whose caller is the
	// transition). Only then: a function calling it is no longer inlined.
	CallerPC bool `json:"callerpc"`
}

// rewriteEntry is a probe: a call of the lab file added to a function, on entry
// (deferred: at return), or just before/after the first statement that calls
// Before/After. The call's names must be in scope there, else the probe is missed.
type rewriteEntry struct {
	ID     int    `json:"id"`
	Func   string `json:"func"`
	Call   string `json:"call"`  // a call expression of the lab file, e.g. goblueprintLabDump(1)
	Defer  bool   `json:"defer"` // run it when the function returns instead of on entry
	Before string `json:"before"`
	After  string `json:"after"`
	// Returning: before every `return NAME[, ...]` (what a function hands back first).
	Returning string `json:"returning"`
}

type rewriteSpec struct {
	Sites   []rewriteSite     `json:"sites"`
	Entries []rewriteEntry    `json:"entries"`
	Objects map[string]string `json:"objects"` // field -> the base's identity field (goid, id)
	Knobs   []knobSpec        `json:"knobs"`
}

type rewriteMiss struct {
	ID     int    `json:"id"`
	Reason string `json:"reason"`
}

type rewriteOut struct {
	Files    map[string]string `json:"files"`
	Applied  []int             `json:"applied"`
	Missed   []rewriteMiss     `json:"missed"`
	Atomic   string            `json:"atomic"`   // import path of the runtime's atomic package
	CallerPC string            `json:"callerpc"` // how this release names the caller's PC
	Imports  map[string]string `json:"imports"`  // local name -> path, as the runtime's files import them
	Knobs    []knobOut         `json:"knobs"`    // the sites each changed knob rewrote
}

type edit struct {
	start, end int
	text       string
}

type rewriter struct {
	l       *loaded
	want    map[string]bool
	spec    rewriteSpec
	out     rewriteOut
	edits   map[int][]edit // file index -> edits
	pcExpr  string
	pcPkg   string // import path the caller-PC expression needs in the file ("" for none)
	srcs    map[int][]byte
	applied map[int]bool
}

type buildContextT = build.Context

func readSpec(specFile string, spec *rewriteSpec) {
	data, err := os.ReadFile(specFile)
	if err != nil {
		fail("cannot read the rewrite spec: " + err.Error())
	}
	if err := json.Unmarshal(data, spec); err != nil {
		fail("cannot read the rewrite spec: " + err.Error())
	}
}

func rewriteMode(ctx build.Context, path string, fields []string, specFile string) rewriteOut {
	var spec rewriteSpec
	readSpec(specFile, &spec)
	l := load(ctx, path)
	if len(l.parseErrs) > 0 {
		fail("the package does not parse: " + l.parseErrs[0])
	}
	r := &rewriter{l: l, want: map[string]bool{}, spec: spec, edits: map[int][]edit{},
		srcs: map[int][]byte{}, applied: map[int]bool{}}
	for _, f := range fields {
		r.want[f] = true
	}
	r.out = rewriteOut{Files: map[string]string{}, Applied: []int{}, Missed: []rewriteMiss{},
		Imports: map[string]string{}, Knobs: []knobOut{}}
	r.findReleaseNames()
	for i, f := range l.files {
		r.file(i, f)
	}
	for _, s := range spec.Sites {
		if !r.applied[s.ID] {
			r.out.Missed = append(r.out.Missed, rewriteMiss{s.ID, "no such write at " + s.File + ":" + strconv.Itoa(s.Line)})
		}
	}
	for _, e := range spec.Entries {
		if !r.applied[e.ID] {
			r.out.Missed = append(r.out.Missed, rewriteMiss{e.ID, "no function " + e.Func + " with a body"})
		}
	}
	r.knobEdits()
	r.apply()
	sort.Ints(r.out.Applied)
	sort.Slice(r.out.Missed, func(i, j int) bool { return r.out.Missed[i].ID < r.out.Missed[j].ID })
	return r.out
}

// findReleaseNames reads, from the package itself, the names that moved between
// releases: the atomic package's import path and the caller-PC intrinsic.
func (r *rewriter) findReleaseNames() {
	for _, f := range r.l.files {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if name == "_" || name == "." {
				continue
			}
			if _, seen := r.out.Imports[name]; !seen {
				r.out.Imports[name] = p
			}
		}
	}
	r.out.Atomic = r.out.Imports["atomic"]
	if r.l.pkg.Scope().Lookup("getcallerpc") != nil {
		r.pcExpr, r.out.CallerPC = "getcallerpc()", "getcallerpc"
		return
	}
	if p, ok := r.out.Imports["sys"]; ok {
		r.pcExpr, r.pcPkg, r.out.CallerPC = "sys.GetCallerPC()", p, "sys.GetCallerPC"
		return
	}
	fail("this release has neither runtime.getcallerpc nor sys.GetCallerPC")
}

func (r *rewriter) src(i int) []byte {
	if b, ok := r.srcs[i]; ok {
		return b
	}
	name := r.l.fset.Position(r.l.files[i].Pos()).Filename
	b, err := os.ReadFile(name)
	if err != nil {
		fail(err.Error())
	}
	r.srcs[i] = b
	return b
}

func (r *rewriter) off(p token.Pos) int { return r.l.fset.Position(p).Offset }

func (r *rewriter) text(i int, n ast.Node) string {
	return string(r.src(i)[r.off(n.Pos()):r.off(n.End())])
}

// printed is a node as go/printer writes it, on one line (used for operands that are
// evaluated a second time, which must be pure; see pure).
func printed(n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), n); err != nil {
		fail(err.Error())
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// pure reports whether evaluating e twice is the same as once: names, constants,
// field selections, arithmetic, and the puintptr/guintptr ptr() accessor.
func pure(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.SelectorExpr:
		return pure(x.X)
	case *ast.BinaryExpr:
		return pure(x.X) && pure(x.Y)
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && pure(x.X)
	case *ast.StarExpr:
		return pure(x.X)
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		return ok && len(x.Args) == 0 && sel.Sel.Name == "ptr" && pure(sel.X)
	}
	return false
}

func (r *rewriter) file(i int, f *ast.File) {
	name := r.l.names[i]
	var sites []rewriteSite
	for _, s := range r.spec.Sites {
		if s.File == name {
			sites = append(sites, s)
		}
	}
	w := &funcWalker{l: r.l, want: r.want}
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.FuncDecl)
		if !ok || d.Body == nil {
			continue
		}
		for _, e := range r.spec.Entries {
			if e.Func == funcName(d) && !r.applied[e.ID] {
				r.probe(i, d, e)
			}
		}
		if len(sites) == 0 {
			continue
		}
		var stack []ast.Node
		ast.Inspect(d.Body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return false
			}
			stack = append(stack, n)
			switch x := n.(type) {
			case *ast.CallExpr:
				r.call(i, w, x, sites)
			case *ast.AssignStmt:
				r.assign(i, w, x, stack, sites)
			}
			return true
		})
	}
}

func (r *rewriter) probe(i int, d *ast.FuncDecl, e rewriteEntry) {
	r.applied[e.ID] = true
	missed := func(why string) { r.out.Missed = append(r.out.Missed, rewriteMiss{e.ID, why}) }
	call, err := parser.ParseExpr(e.Call)
	if err != nil {
		missed("probe call does not parse: " + err.Error())
		return
	}
	var at int
	var text string
	var pos token.Pos
	switch {
	case e.Returning != "":
		rets := returnsOf(d.Body, e.Returning)
		if len(rets) == 0 {
			missed(funcName(d) + " has no `return " + e.Returning + "`")
			return
		}
		for _, ret := range rets {
			if name := r.unknownName(d, call, ret.Pos()); name != "" {
				missed(fmt.Sprintf("%s at %s:%d: no %s in scope", funcName(d), r.l.names[i], r.l.line(ret.Pos()), name))
				return
			}
		}
		for _, ret := range rets {
			at := r.off(ret.Pos())
			r.edits[i] = append(r.edits[i], edit{at, at, e.Call + "; "})
		}
		r.out.Applied = append(r.out.Applied, e.ID)
		return
	case e.Before != "" || e.After != "":
		name := e.Before + e.After
		stmt := firstStmtCalling(d.Body, name)
		if stmt == nil {
			missed(funcName(d) + " has no statement calling " + name)
			return
		}
		if e.Before != "" {
			at, text, pos = r.off(stmt.Pos()), e.Call+"; ", stmt.Pos()
		} else {
			at, text, pos = r.off(stmt.End()), "; "+e.Call, stmt.End()
		}
	default:
		stmt := e.Call + ";"
		if e.Defer {
			stmt = "defer " + stmt
		}
		at, text, pos = r.off(d.Body.Lbrace)+1, " "+stmt, d.Body.Lbrace
	}
	if name := r.unknownName(d, call, pos); name != "" {
		missed(fmt.Sprintf("%s at %s:%d: no %s in scope", funcName(d), r.l.names[i], r.l.line(pos), name))
		return
	}
	r.edits[i] = append(r.edits[i], edit{at, at, text})
	r.out.Applied = append(r.out.Applied, e.ID)
}

// returnsOf lists the statements `return NAME[, ...]` of a body.
func returnsOf(body *ast.BlockStmt, name string) []*ast.ReturnStmt {
	var out []*ast.ReturnStmt
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // a closure's returns are not the function's
		}
		if ret, ok := n.(*ast.ReturnStmt); ok && len(ret.Results) >= 1 {
			if id, ok := ret.Results[0].(*ast.Ident); ok && id.Name == name {
				out = append(out, ret)
			}
		}
		return true
	})
	return out
}

// firstStmtCalling is the first statement (in source order, at any depth) that is a call
// of NAME, or assigns or declares from one.
func firstStmtCalling(body *ast.BlockStmt, name string) ast.Stmt {
	var found ast.Stmt
	isCall := func(e ast.Expr) bool {
		c, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := c.Fun.(*ast.Ident)
		return ok && id.Name == name
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch s := n.(type) {
		case *ast.ExprStmt:
			if isCall(s.X) {
				found = s
			}
		case *ast.AssignStmt:
			if len(s.Rhs) == 1 && isCall(s.Rhs[0]) {
				found = s
			}
		}
		return found == nil
	})
	return found
}

// unknownName is the first name of CALL that is neither the lab's, nor declared in D
// before POS, nor a package-level name of the runtime ("" when all resolve).
func (r *rewriter) unknownName(d *ast.FuncDecl, call ast.Expr, pos token.Pos) string {
	local := map[string]bool{}
	for id, obj := range r.l.info.Defs {
		if obj != nil && id.Pos() >= d.Pos() && id.Pos() < pos {
			local[id.Name] = true
		}
	}
	bad := ""
	ast.Inspect(call, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			// Only the root of a.b.c is a name to resolve; field names are the compiler's.
			var root ast.Expr = sel
			for {
				s, ok := root.(*ast.SelectorExpr)
				if !ok {
					break
				}
				root = s.X
			}
			if id, ok := root.(*ast.Ident); ok {
				if bad == "" && !r.known(id.Name, local) {
					bad = id.Name
				}
				return false
			}
			ast.Inspect(root, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && bad == "" && !r.known(id.Name, local) {
					bad = id.Name
				}
				return true
			})
			return false
		}
		if id, ok := n.(*ast.Ident); ok && bad == "" && !r.known(id.Name, local) {
			bad = id.Name
		}
		return true
	})
	return bad
}

func (r *rewriter) known(name string, local map[string]bool) bool {
	return strings.HasPrefix(name, "goblueprintLab") || local[name] ||
		r.l.pkg.Scope().Lookup(name) != nil || types.Universe.Lookup(name) != nil
}

func (r *rewriter) match(sites []rewriteSite, field, how, callee string, pos token.Pos) *rewriteSite {
	line := r.l.line(pos)
	for k := range sites {
		s := &sites[k]
		if s.Field == field && s.How == how && s.Callee == callee && s.Line == line && !r.applied[s.ID] {
			return s
		}
	}
	return nil
}

// object is the identity of the status word's owner: base.goid for a g, base.id for a p.
func (r *rewriter) object(field string, subj ast.Expr) (string, bool) {
	sel, ok := ast.Unparen(subj).(*ast.SelectorExpr)
	if !ok || !pure(sel.X) {
		return "", false
	}
	idf := r.spec.Objects[field]
	if idf == "" {
		return "", false
	}
	return "uint64(" + printed(sel.X) + "." + idf + ")", true
}

func (r *rewriter) pc(s *rewriteSite) string {
	if s.CallerPC {
		return r.pcExpr
	}
	return "0"
}

func (r *rewriter) done(i int, s *rewriteSite, e edit) {
	r.edits[i] = append(r.edits[i], e)
	r.applied[s.ID] = true
	r.out.Applied = append(r.out.Applied, s.ID)
}

func (r *rewriter) miss(s *rewriteSite, why string) {
	r.applied[s.ID] = true
	r.out.Missed = append(r.out.Missed, rewriteMiss{s.ID, why})
}

func (r *rewriter) call(i int, w *funcWalker, c *ast.CallExpr, sites []rewriteSite) {
	var s *rewriteSite
	var subj ast.Expr
	var ops []ast.Expr
	atomicWord := false
	if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok {
		if f := w.statusField(sel.X); f != "" {
			s, subj, ops, atomicWord = r.match(sites, f, "method", sel.Sel.Name, c.Pos()), sel.X, c.Args, true
		}
	}
	if s == nil {
		for k, a := range c.Args {
			if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND {
				if f := w.statusField(u.X); f != "" {
					s = r.match(sites, f, "call", types.ExprString(c.Fun), c.Pos())
					subj = u.X
					ops = append(append([]ast.Expr{}, c.Args[:k]...), c.Args[k+1:]...)
					break
				}
			}
		}
	}
	if s == nil {
		return
	}
	obj, ok := r.object(s.Field, subj)
	if !ok {
		r.miss(s, "the status word's owner is not a plain expression")
		return
	}
	id := strconv.Itoa(s.ID)
	pc := r.pc(s)
	switch s.Kind {
	case "cas":
		if len(ops) != 2 || !pure(ops[0]) || !pure(ops[1]) {
			r.miss(s, "CAS operands are not plain expressions")
			return
		}
		// The original call stays as it is (evaluated once, as before); the recorder
		// sees its result and the operands, which are pure.
		text := "goblueprintLabCas(" + id + ", " + obj + ", uint64(" + printed(ops[0]) + "), uint64(" +
			printed(ops[1]) + "), " + pc + ", " + r.text(i, c) + ")"
		r.done(i, s, edit{r.off(c.Pos()), r.off(c.End()), text})
	case "store":
		if len(ops) != 1 {
			r.miss(s, "a store with more than one operand")
			return
		}
		fn, addr := "goblueprintLabSwap32", "&"+r.text(i, subj)
		if atomicWord {
			fn = "goblueprintLabSwapA32"
		}
		text := fn + "(" + id + ", " + obj + ", " + addr + ", " + r.text(i, ops[0]) + ", " + pc + ")"
		r.done(i, s, edit{r.off(c.Pos()), r.off(c.End()), text})
	default:
		r.miss(s, "unknown kind "+s.Kind)
	}
}

func (r *rewriter) assign(i int, w *funcWalker, a *ast.AssignStmt, stack []ast.Node, sites []rewriteSite) {
	if len(a.Lhs) != 1 || len(a.Rhs) != 1 || a.Tok != token.ASSIGN {
		return
	}
	f := w.statusField(a.Lhs[0])
	if f == "" {
		return
	}
	s := r.match(sites, f, "assign", "", a.Pos())
	if s == nil {
		return
	}
	if len(stack) < 2 {
		r.miss(s, "assignment outside a block")
		return
	}
	switch stack[len(stack)-2].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause, *ast.LabeledStmt:
	default:
		r.miss(s, "assignment is not a statement of its own")
		return
	}
	obj, ok := r.object(s.Field, a.Lhs[0])
	if !ok {
		r.miss(s, "the status word's owner is not a plain expression")
		return
	}
	// A plain store becomes an atomic swap: the same store, and the word it replaced.
	text := "goblueprintLabSwap32(" + strconv.Itoa(s.ID) + ", " + obj + ", &" + r.text(i, a.Lhs[0]) + ", " +
		r.text(i, a.Rhs[0]) + ", " + r.pc(s) + ")"
	r.done(i, s, edit{r.off(a.Pos()), r.off(a.End()), text})
}

// apply splices the edits into each touched file, adds the caller-PC import where
// a file lacks it, and checks that the result parses.
func (r *rewriter) apply() {
	for i, edits := range r.edits {
		sort.Slice(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
		src := append([]byte{}, r.src(i)...)
		for _, e := range edits {
			src = append(src[:e.start], append([]byte(e.text), src[e.end:]...)...)
		}
		if r.pcPkg != "" && !importsPath(r.l.files[i], r.pcPkg) && bytes.Contains(src, []byte(r.pcExpr)) {
			// After the package clause, on its line, so that no line moves.
			end := r.off(r.l.files[i].Name.End())
			add := "; import " + strconv.Quote(r.pcPkg)
			src = append(src[:end], append([]byte(add), src[end:]...)...)
		}
		name := r.l.names[i]
		if _, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments); err != nil {
			fail(fmt.Sprintf("rewritten %s does not parse: %v", name, err))
		}
		r.out.Files[name] = string(src)
	}
}

func importsPath(f *ast.File, p string) bool {
	for _, imp := range f.Imports {
		if q, _ := strconv.Unquote(imp.Path.Value); q == p {
			return true
		}
	}
	return false
}
