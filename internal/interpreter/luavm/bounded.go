package luavm

import (
	lua "github.com/yuin/gopher-lua"
)

// Library functions that build one large value in a single Go call are
// bounded before they allocate: they compute (or bound) the size of their
// result and reserve it in the call's memory budget (budget.reserve). The
// budget's periodic look at the allocation counter cannot stop an
// allocation that happens inside one instruction. string.rep and
// string.gsub are not offered at all (Karmada's choice), `..` is
// luaConcat (concat.go).

// smallResultBytes is the result size, in bytes, below which no
// reservation is made: reading the allocation counter costs about 0.6 µs,
// and smaller results are caught by the budget's regular checks.
const smallResultBytes = 64 << 10

// maxFormatWidth is fmt's largest width or precision (larger ones are
// printed as %!(BADWIDTH) and the like), in bytes.
const maxFormatWidth = 1_000_000

// budgetOf is the budget of the call L runs, nil outside one.
func budgetOf(L *lua.LState) *budget {
	b, _ := L.Context().(*budget)
	return b
}

// reserveResult raises the memory budget's error, before anything is allocated,
// when a result of size bytes built by what would exceed it.
func reserveResult(L *lua.LState, what string, size int) {
	if size < smallResultBytes {
		return
	}
	if b := budgetOf(L); b != nil {
		if err := b.reserve(what, int64(size)); err != nil {
			L.RaiseError("%s", err.Error())
		}
	}
}

// meterOf is the pattern matcher's meter for L: steps count as
// instructions of the call's budget; outside a budget only the context is
// checked.
func meterOf(L *lua.LState) meterFunc {
	b := budgetOf(L)
	return func(n int) error {
		if b != nil {
			return b.charge(n)
		}
		if ctx := L.Context(); ctx != nil {
			return ctx.Err()
		}
		return nil
	}
}

// formatBound is an upper bound of the size of fmt.Sprintf(format,
// args...) for the Lua values args: the literal bytes, plus for each verb
// its width and precision (at most maxFormatWidth each), 64 bytes of
// decoration (fmt's %!d(lua.LNumber=...) and the like) and the longest
// argument times the verb's expansion (4 for %q's escapes, 3 for % x).
// Explicit argument indexes ("%[1]s") may repeat an argument, hence the
// longest one for every verb.
func formatBound(format string, args []any) int {
	longest := 0
	for _, a := range args {
		longest = max(longest, valueLen(a))
	}
	size := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			size++
			continue
		}
		var n int
		n, i = verbBound(format, i+1, longest)
		size += n
	}
	return size
}

// verbBound bounds the output of the verb that starts after the '%' at
// format[i:], and returns the index of its last byte.
func verbBound(format string, i, longest int) (int, int) {
	width, prec := 0, 0
	target := &width
	for ; i < len(format); i++ {
		c := format[i]
		switch {
		case c >= '0' && c <= '9':
			*target = min(*target*10+int(c-'0'), maxFormatWidth)
		case c == '.':
			target = &prec
		case c == '+' || c == '-' || c == '#' || c == ' ' || c == '*' || c == '[' || c == ']':
		case c == '%':
			return 1, i
		default:
			mult := 1
			switch c {
			case 'q':
				mult = 4
			case 'x', 'X':
				mult = 3
			}
			return 64 + width + prec + mult*longest, i
		}
	}
	return 64 + width + prec, i
}

// valueLen bounds the length of a Lua value printed by fmt: a string's
// length, 400 bytes for a number (%f of 1e308 has 309 digits), 64 for
// anything else ("table: 0xc000123456").
func valueLen(v any) int {
	switch t := v.(type) {
	case lua.LString:
		return len(t)
	case lua.LNumber:
		return 400
	}
	return 64
}

// boundedTableConcat wraps gopher-lua's table.concat: the size of the
// result (the values in the range, and the separators) is reserved first,
// then the original builds it. Walking the range counts one instruction
// per element.
func boundedTableConcat(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		tbl := L.CheckTable(1)
		sep := L.OptString(2, "")
		n := tbl.Len()
		i, j := max(min(L.OptInt(3, 1), n), 1), min(L.OptInt(4, n), n)
		if i <= j {
			if err := meterOf(L)(j - i + 1); err != nil {
				L.RaiseError("%s", err.Error())
			}
			size := (j - i) * len(sep)
			for k := i; k <= j; k++ {
				size += len(lua.LVAsString(tbl.RawGetInt(k)))
			}
			reserveResult(L, "table.concat", size)
		}
		return orig(L)
	}
}
