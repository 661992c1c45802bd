package main

import (
	"go/ast"
	"go/types"
)

// literalFact is a composite literal of a runtime struct type that carries a *g or *p,
// with the expression given for each field and the guards that hold where it is built.
// A method that writes through a field of its receiver (s.pp.status in
// (syscallingThread).releaseP) learns from it what its constructors checked
// (setBlockOnExitSyscall returns a syscallingThread only when pp.status == _Prunning).
type literalFact struct {
	Type   string            `json:"type"`
	Func   string            `json:"func"`
	File   string            `json:"file"`
	Line   int               `json:"line"`
	Fields map[string]string `json:"fields"`
	Guards map[string]any    `json:"guards,omitempty"`
}

func (w *funcWalker) compositeLit(x *ast.CompositeLit) {
	tv, ok := w.l.info.Types[x]
	if !ok {
		return
	}
	named, ok := tv.Type.(*types.Named)
	if !ok || named.Obj().Pkg() != w.l.pkg {
		return
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok || !carriesGorP(st) {
		return
	}
	lf := literalFact{Type: named.Obj().Name(), Func: w.name, File: w.file, Line: w.l.line(x.Pos()),
		Fields: map[string]string{}}
	for i, elt := range x.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok {
				lf.Fields[id.Name] = types.ExprString(kv.Value)
			}
		} else if i < st.NumFields() {
			lf.Fields[st.Field(i).Name()] = types.ExprString(elt)
		}
	}
	if len(lf.Fields) == 0 {
		return // the zero value: nothing was checked
	}
	if g := w.guards(); len(g) > 0 {
		lf.Guards = map[string]any{}
		for k, c := range g {
			lf.Guards[k] = c.json()
		}
	}
	w.literals = append(w.literals, lf)
}

func carriesGorP(st *types.Struct) bool {
	for i := 0; i < st.NumFields(); i++ {
		t := st.Field(i).Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok && (n.Obj().Name() == "g" || n.Obj().Name() == "p") {
			return true
		}
	}
	return false
}
