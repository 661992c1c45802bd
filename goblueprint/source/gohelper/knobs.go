// Knobs: scheduler constants a lab build may change, found in the AST.
//
//	gohelper knobs -goroot DIR -pkg runtime -spec knobs.json
//
// A knob is a constant expression located by a pattern in one function (or a
// named constant): the value sysmon assigns to or compares its delay with, the
// modulus of schedtick, a factor of nmspinning, a result of a return. All
// expressions of the function that play the same part with the same value
// belong to the knob (sysmon's `delay = 20` appears twice), so a change moves
// them together. The rewrite mode replaces their text; lines stay where they are.
package main

import (
	"go/ast"
	"go/constant"
	"go/token"
)

type knobSpec struct {
	Name    string `json:"name"`
	Func    string `json:"func"`    // "" for a package-level constant
	Pattern string `json:"pattern"` // const, assign, compare, mod, mul, return
	Var     string `json:"var"`
	Index   int    `json:"index"` // for return: which result
	Set     string `json:"set"`   // rewrite mode: the new value ("" keeps it)
}

type knobSite struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Text  string `json:"text"`
	Value string `json:"value"`
	node  ast.Expr
	fidx  int
}

type knobOut struct {
	Name   string     `json:"name"`
	Sites  []knobSite `json:"sites"`
	Reason string     `json:"reason,omitempty"`
}

func knobsMode(ctx buildContextT, path, specFile string) []knobOut {
	var spec rewriteSpec
	readSpec(specFile, &spec)
	l := load(ctx, path)
	r := &rewriter{l: l, srcs: map[int][]byte{}}
	out := []knobOut{}
	for _, k := range spec.Knobs {
		out = append(out, r.findKnob(k))
	}
	return out
}

func (r *rewriter) constOf(e ast.Expr) (constant.Value, bool) {
	tv, ok := r.l.info.Types[e]
	if !ok || tv.Value == nil {
		return nil, false
	}
	return tv.Value, true
}

func mentions(e ast.Node, name string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

func lastName(e ast.Expr) string {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func (r *rewriter) findKnob(k knobSpec) knobOut {
	out := knobOut{Name: k.Name, Sites: []knobSite{}}
	add := func(i int, e ast.Expr, v constant.Value) {
		out.Sites = append(out.Sites, knobSite{File: r.l.names[i], Line: r.l.line(e.Pos()), Text: r.text(i, e),
			Value: v.ExactString(), node: e, fidx: i})
	}
	for i, f := range r.l.files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if k.Pattern == "const" && k.Func == "" && d.Tok == token.CONST {
					r.constSpec(i, d, k.Var, add)
				}
			case *ast.FuncDecl:
				if d.Body == nil || funcName(d) != k.Func {
					continue
				}
				if k.Pattern == "const" {
					ast.Inspect(d.Body, func(n ast.Node) bool {
						if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.CONST {
							r.constSpec(i, g, k.Var, add)
						}
						return true
					})
					continue
				}
				r.patternIn(i, d, k, add)
			}
		}
	}
	if len(out.Sites) == 0 {
		out.Reason = "no " + k.Pattern + " of " + k.Var + " in " + k.Func
		if k.Func == "" {
			out.Reason = "no constant " + k.Var
		}
	}
	return out
}

func (r *rewriter) constSpec(i int, d *ast.GenDecl, name string, add func(int, ast.Expr, constant.Value)) {
	for _, s := range d.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for j, n := range vs.Names {
			if n.Name == name && j < len(vs.Values) {
				if v, ok := r.constOf(vs.Values[j]); ok {
					add(i, vs.Values[j], v)
				}
			}
		}
	}
}

// patternIn finds the knob's first expression in d, then every expression of d that
// plays the same part (assigned to or compared with the same variable) with the same value.
func (r *rewriter) patternIn(i int, d *ast.FuncDecl, k knobSpec, add func(int, ast.Expr, constant.Value)) {
	var first constant.Value
	type cand struct {
		e ast.Expr
		v constant.Value
	}
	var same []cand
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok == token.ASSIGN && len(x.Lhs) == 1 && len(x.Rhs) == 1 && lastName(x.Lhs[0]) == k.Var {
				if v, ok := r.constOf(x.Rhs[0]); ok {
					same = append(same, cand{x.Rhs[0], v})
					if k.Pattern == "assign" && first == nil {
						first = v
					}
				}
			}
		case *ast.BinaryExpr:
			switch x.Op {
			case token.GTR, token.GEQ, token.LSS, token.LEQ:
				if lastName(x.X) == k.Var {
					if v, ok := r.constOf(x.Y); ok {
						same = append(same, cand{x.Y, v})
						if k.Pattern == "compare" && first == nil {
							first = v
						}
					}
				}
			case token.REM:
				if k.Pattern == "mod" && lastName(x.X) == k.Var {
					if v, ok := r.constOf(x.Y); ok && first == nil {
						first = v
						add(i, x.Y, v)
					}
				}
			case token.MUL:
				if k.Pattern == "mul" && mentions(x.Y, k.Var) {
					if v, ok := r.constOf(x.X); ok && first == nil {
						first = v
						add(i, x.X, v)
					}
				}
			}
		case *ast.ReturnStmt:
			if k.Pattern == "return" && len(x.Results) > k.Index && mentions(x.Results[0], k.Var) {
				if v, ok := r.constOf(x.Results[k.Index]); ok && first == nil {
					first = v
					add(i, x.Results[k.Index], v)
				}
			}
		}
		return true
	})
	if first == nil || (k.Pattern != "assign" && k.Pattern != "compare") {
		return
	}
	for _, c := range same {
		if constant.Compare(c.v, token.EQL, first) {
			add(i, c.e, c.v)
		}
	}
}

// knobEdits replaces the text of every site of each knob given a value.
func (r *rewriter) knobEdits() {
	for _, k := range r.spec.Knobs {
		if k.Set == "" {
			continue
		}
		found := r.findKnob(k)
		if len(found.Sites) == 0 {
			fail("knob " + k.Name + ": " + found.Reason)
		}
		for _, s := range found.Sites {
			r.edits[s.fidx] = append(r.edits[s.fidx], edit{r.off(s.node.Pos()), r.off(s.node.End()), "(" + k.Set + ")"})
		}
		r.out.Knobs = append(r.out.Knobs, found)
	}
}
