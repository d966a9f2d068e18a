package luavm

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The `..` operator. gopher-lua's OP_CONCAT builds its whole result in one
// instruction, before the budget's next look at the allocation counter: a
// chain `s .. s .. s ...` of a 100 MB string allocates gigabytes at once.
// The compiler therefore rewrites every concatenation chain `a .. b .. c`
// into a call `(concat)(a, b, c)` of luaConcat, which has OP_CONCAT's
// semantics (right to left, numbers as strings, __concat metamethods, the
// same error text) and reserves its result's size in the memory budget
// before building it.
//
// `(concat)` cannot be written in Lua: a chunk that concatenates starts with
// `local (concat) = (concat)`, a local copied from the global of that name
// which the sandbox sets, so functions reach it as an upvalue and a script
// cannot replace it for the chunk's code.

// concatName names the global and the local holding luaConcat.
const concatName = "(concat)"

// rewriteConcat rewrites the chunk's concatenations and reports whether it
// had any.
func rewriteConcat(chunk []ast.Stmt) ([]ast.Stmt, bool) {
	w := &concatRewriter{}
	w.stmts(chunk)
	if !w.found {
		return chunk, false
	}
	local := &ast.LocalAssignStmt{Names: []string{concatName}, Exprs: []ast.Expr{&ast.IdentExpr{Value: concatName}}}
	return append([]ast.Stmt{local}, chunk...), true
}

type concatRewriter struct{ found bool }

func (w *concatRewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *concatRewriter) stmt(s ast.Stmt) {
	switch st := s.(type) {
	case *ast.AssignStmt:
		w.exprs(st.Lhs)
		w.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		w.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		st.Expr = w.expr(st.Expr)
	case *ast.DoBlockStmt:
		w.stmts(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = w.expr(st.Condition)
		w.stmts(st.Stmts)
	case *ast.RepeatStmt:
		st.Condition = w.expr(st.Condition)
		w.stmts(st.Stmts)
	case *ast.IfStmt:
		st.Condition = w.expr(st.Condition)
		w.stmts(st.Then)
		w.stmts(st.Else)
	case *ast.NumberForStmt:
		st.Init, st.Limit = w.expr(st.Init), w.expr(st.Limit)
		if st.Step != nil {
			st.Step = w.expr(st.Step)
		}
		w.stmts(st.Stmts)
	case *ast.GenericForStmt:
		w.exprs(st.Exprs)
		w.stmts(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			st.Name.Func = w.expr(st.Name.Func)
			st.Name.Receiver = w.expr(st.Name.Receiver)
		}
		w.stmts(st.Func.Stmts)
	case *ast.ReturnStmt:
		w.exprs(st.Exprs)
	}
}

func (w *concatRewriter) exprs(list []ast.Expr) {
	for i, e := range list {
		list[i] = w.expr(e)
	}
}

// expr returns e with its concatenations rewritten; nil stays nil.
func (w *concatRewriter) expr(e ast.Expr) ast.Expr {
	switch ex := e.(type) {
	case *ast.StringConcatOpExpr:
		return w.concat(ex)
	case *ast.AttrGetExpr:
		ex.Object, ex.Key = w.expr(ex.Object), w.expr(ex.Key)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			f.Key, f.Value = w.expr(f.Key), w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		ex.Func, ex.Receiver = w.expr(ex.Func), w.expr(ex.Receiver)
		w.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		ex.Lhs, ex.Rhs = w.expr(ex.Lhs), w.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		ex.Lhs, ex.Rhs = w.expr(ex.Lhs), w.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		ex.Lhs, ex.Rhs = w.expr(ex.Lhs), w.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex.Expr = w.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		ex.Expr = w.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		ex.Expr = w.expr(ex.Expr)
	case *ast.FunctionExpr:
		w.stmts(ex.Stmts)
	}
	return e
}

// concat turns a right-nested chain a .. (b .. c) into (concat)(a, b, c),
// as OP_CONCAT takes the whole chain at once. The call is adjusted to one
// result, like a parenthesised call, so that `return a .. b` is not a tail
// call (error positions stay those of the concatenation).
func (w *concatRewriter) concat(ex *ast.StringConcatOpExpr) ast.Expr {
	w.found = true
	var args []ast.Expr
	var cur ast.Expr = ex
	for {
		c, ok := cur.(*ast.StringConcatOpExpr)
		if !ok {
			args = append(args, w.expr(cur))
			break
		}
		args = append(args, w.expr(c.Lhs))
		cur = c.Rhs
	}
	fn := &ast.IdentExpr{Value: concatName}
	fn.SetLine(ex.Line())
	fn.SetLastLine(ex.LastLine())
	call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
	call.SetLine(ex.Line())
	call.SetLastLine(ex.LastLine())
	return call
}

// luaConcat is OP_CONCAT (gopher-lua's stringConcat) as a function of its
// operands: from the right, runs of strings and numbers are joined, after
// their total size is reserved in the memory budget; any other pair goes
// to a __concat metamethod of either operand, or fails with gopher-lua's
// message.
func luaConcat(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		L.RaiseError("%s needs at least two values", concatName)
	}
	rhs := L.Get(n)
	for i := n - 1; i >= 1; {
		lhs := L.Get(i)
		if !lua.LVCanConvToString(lhs) || !lua.LVCanConvToString(rhs) {
			rhs = concatMeta(L, lhs, rhs)
			i--
			continue
		}
		j := i
		for j >= 1 && lua.LVCanConvToString(L.Get(j)) {
			j--
		}
		rhs = lua.LString(joinReserved(L, "the .. operator", j+1, i, lua.LVAsString(rhs)))
		i = j
	}
	L.Push(rhs)
	return 1
}

// joinReserved joins the string values of stack slots from..to and last,
// after reserving their total size.
func joinReserved(L *lua.LState, what string, from, to int, last string) string {
	parts := make([]string, 0, to-from+2)
	size := len(last)
	for k := from; k <= to; k++ {
		p := lua.LVAsString(L.Get(k))
		size += len(p)
		parts = append(parts, p)
	}
	reserveResult(L, what, size)
	var b strings.Builder
	b.Grow(size)
	for _, p := range parts {
		b.WriteString(p)
	}
	b.WriteString(last)
	return b.String()
}

func concatMeta(L *lua.LState, lhs, rhs lua.LValue) lua.LValue {
	op := L.GetMetaField(lhs, "__concat")
	if op == lua.LNil {
		op = L.GetMetaField(rhs, "__concat")
	}
	if op.Type() != lua.LTFunction {
		L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
	}
	L.Push(op)
	L.Push(lhs)
	L.Push(rhs)
	L.Call(2, 1)
	ret := L.Get(-1)
	L.Pop(1)
	return ret
}
