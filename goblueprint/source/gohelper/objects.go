package main

import (
	"go/ast"
	"go/types"
)

// originFact says where a local variable's value came from when every assignment to it is a
// call of a package function: pp := releasep().  A status write through pp then starts from
// the status releasep left on the P it returns.
type originFact struct {
	Var  string   `json:"var"`
	From []string `json:"from"`
	Line int      `json:"line"` // of the last assignment
}

// objectOrigin describes the object of a status write (the X of X.status).
func (w *funcWalker) objectOrigin(subj ast.Expr) *originFact {
	sel, ok := ast.Unparen(subj).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return nil
	}
	return w.varOrigin(id)
}

// returnOrigin describes what the function returns when its last statement is `return v`.
func (w *funcWalker) returnOrigin() *originFact {
	body := w.decl.Body
	if body == nil || len(body.List) == 0 {
		return nil
	}
	ret, ok := body.List[len(body.List)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil
	}
	switch r := ast.Unparen(ret.Results[0]).(type) {
	case *ast.Ident:
		return w.varOrigin(r)
	case *ast.CallExpr: // return releasepNoTrace()
		if name := w.packageCallee(r); name != "" {
			return &originFact{From: []string{name}, Line: w.l.line(r.Pos())}
		}
	}
	return nil
}

func (w *funcWalker) packageCallee(call *ast.CallExpr) string {
	var fn *types.Func
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		fn, _ = w.l.info.Uses[f].(*types.Func)
	case *ast.SelectorExpr:
		fn, _ = w.l.info.Uses[f.Sel].(*types.Func)
	}
	if fn == nil || fn.Pkg() != w.l.pkg {
		return ""
	}
	return objName(fn, w.l.pkg)
}

func (w *funcWalker) varOrigin(id *ast.Ident) *originFact {
	v, ok := w.l.info.Uses[id].(*types.Var)
	if !ok {
		return nil
	}
	if _, isParam := w.params[v]; isParam {
		return nil
	}
	defs := w.defs[v]
	if len(defs) == 0 {
		return nil
	}
	of := &originFact{Var: id.Name}
	for _, d := range defs {
		call, ok := ast.Unparen(d).(*ast.CallExpr)
		if !ok {
			return nil
		}
		name := w.packageCallee(call)
		if name == "" {
			return nil
		}
		of.From = append(of.From, name)
		if line := w.l.line(d.Pos()); line > of.Line {
			of.Line = line
		}
	}
	return of
}
