package luavm

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The string library is gopher-lua's with Karmada's restrictions
// (pkg/util/lifted/lua/string_safe.go): rep, gsub and dump exist but raise an
// error, string arguments longer than maxStringArg bytes are refused (len is
// exempt), and loops inside the functions honour the call's context.
// Beyond Karmada: find, match and gmatch run the metered matcher of
// pattern.go, whose steps count against the call's budget, and format
// checks the size its result can reach against the memory budget before
// formatting (bounded.go).

// maxStringArg is Karmada's limit on a string argument, in bytes.
const maxStringArg = 1000000

const notSupportedFmt = "The Lua function string.%s is not supported by Karmada. If you believe this function is essential for your use case, please submit an issue to let us know why you need it."

func openSafeString(L *lua.LState) int {
	mod := L.RegisterModule(lua.StringLibName, map[string]lua.LGFunction{
		"byte":    strByte,
		"char":    strChar,
		"dump":    strUnsupported("dump"),
		"find":    strFind,
		"format":  strFormat,
		"gsub":    strUnsupported("gsub"),
		"len":     strLen,
		"lower":   strLower,
		"match":   strMatch,
		"rep":     strUnsupported("rep"),
		"reverse": strReverse,
		"sub":     strSub,
		"upper":   strUpper,
	}).(*lua.LTable)
	gmatch := L.NewClosure(strGmatch, L.NewFunction(strGmatchIter))
	mod.RawSetString("gmatch", gmatch)
	mod.RawSetString("gfind", gmatch)
	mod.RawSetString("__index", mod)
	L.SetMetatable(lua.LString(""), mod)
	L.Push(mod)
	return 1
}

func strUnsupported(name string) lua.LGFunction {
	return func(L *lua.LState) int {
		L.RaiseError(notSupportedFmt, name)
		return 0
	}
}

func checkStrArg(L *lua.LState, n int) string {
	s := L.CheckString(n)
	if len(s) > maxStringArg {
		L.RaiseError("string length %d exceeds the maximum allowed input string length %d in Karmada lua string lib, please check your lua script.", len(s), maxStringArg)
	}
	return s
}

func raiseIfDone(L *lua.LState) {
	if ctx := L.Context(); ctx != nil {
		select {
		case <-ctx.Done():
			L.RaiseError("%s", ctx.Err().Error())
		default:
		}
	}
}

func strByte(L *lua.LState) int {
	str := checkStrArg(L, 1)
	start := L.OptInt(2, 1) - 1
	end := L.OptInt(3, -1)
	l := len(str)
	if start < 0 {
		start = l + start + 1
	}
	if end < 0 {
		end = l + end + 1
	}
	if L.GetTop() == 2 {
		if start < 0 || start >= l {
			return 0
		}
		L.Push(lua.LNumber(str[start]))
		return 1
	}
	start = max(start, 0)
	end = min(end, l)
	if end < 0 || end <= start || start >= l {
		return 0
	}
	for i := start; i < end; i++ {
		raiseIfDone(L)
		L.Push(lua.LNumber(str[i]))
	}
	return end - start
}

func strChar(L *lua.LState) int {
	top := L.GetTop()
	bytes := make([]byte, top)
	for i := 1; i <= top; i++ {
		raiseIfDone(L)
		bytes[i-1] = uint8(L.CheckInt(i))
	}
	L.Push(lua.LString(string(bytes)))
	return 1
}

func strFind(L *lua.LState) int {
	str := checkStrArg(L, 1)
	pattern := checkStrArg(L, 2)
	if len(pattern) == 0 {
		L.Push(lua.LNumber(1))
		L.Push(lua.LNumber(0))
		return 2
	}
	init := luaIndexToStringIndex(str, L.OptInt(3, 1), true)
	plain := false
	if L.GetTop() == 4 {
		plain = lua.LVAsBool(L.Get(4))
	}
	if plain {
		pos := strings.Index(str[init:], pattern)
		if pos < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init+pos) + 1)
		L.Push(lua.LNumber(init + pos + len(pattern)))
		return 2
	}
	mds, err := findPattern(pattern, str, init, 1, meterOf(L))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	if len(mds) == 0 {
		L.Push(lua.LNil)
		return 1
	}
	md := mds[0]
	L.Push(lua.LNumber(md.Capture(0) + 1))
	L.Push(lua.LNumber(md.Capture(1)))
	for i := 2; i < md.CaptureLength(); i += 2 {
		raiseIfDone(L)
		pushCapture(L, str, md, i)
	}
	return md.CaptureLength()/2 + 1
}

func pushCapture(L *lua.LState, str string, md *matchData, i int) {
	if md.IsPosCapture(i) {
		L.Push(lua.LNumber(md.Capture(i)))
	} else {
		L.Push(lua.LString(str[md.Capture(i):md.Capture(i+1)]))
	}
}

func strFormat(L *lua.LState) int {
	str := checkStrArg(L, 1)
	top := L.GetTop()
	args := make([]any, top-1)
	for i := 2; i <= top; i++ {
		raiseIfDone(L)
		args[i-2] = L.Get(i)
	}
	npat := strings.Count(str, "%") - strings.Count(str, "%%")
	args = args[:max(min(npat, len(args)), 0)]
	reserveResult(L, "string.format", formatBound(str, args))
	L.Push(lua.LString(fmt.Sprintf(str, args...)))
	return 1
}

type gmatchState struct {
	str     string
	pos     int
	matches []*matchData
}

func strGmatchIter(L *lua.LState) int {
	md := L.CheckUserData(1).Value.(*gmatchState)
	idx := md.pos
	md.pos++
	if idx == len(md.matches) {
		return 0
	}
	L.Push(L.Get(1))
	match := md.matches[idx]
	if match.CaptureLength() == 2 {
		L.Push(lua.LString(md.str[match.Capture(0):match.Capture(1)]))
		return 1
	}
	for i := 2; i < match.CaptureLength(); i += 2 {
		raiseIfDone(L)
		pushCapture(L, md.str, match, i)
	}
	return match.CaptureLength()/2 - 1
}

func strGmatch(L *lua.LState) int {
	str := checkStrArg(L, 1)
	pattern := checkStrArg(L, 2)
	mds, err := findPattern(pattern, str, 0, -1, meterOf(L))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(L.Get(lua.UpvalueIndex(1)))
	ud := L.NewUserData()
	ud.Value = &gmatchState{str: str, matches: mds}
	L.Push(ud)
	return 2
}

func strLen(L *lua.LState) int {
	L.Push(lua.LNumber(len(L.CheckString(1))))
	return 1
}

func strLower(L *lua.LState) int {
	L.Push(lua.LString(strings.ToLower(checkStrArg(L, 1))))
	return 1
}

func strUpper(L *lua.LState) int {
	L.Push(lua.LString(strings.ToUpper(checkStrArg(L, 1))))
	return 1
}

// strMatch returns zero values when nothing matches, as gopher-lua does.
func strMatch(L *lua.LState) int {
	str := checkStrArg(L, 1)
	pattern := checkStrArg(L, 2)
	offset := L.OptInt(3, 1)
	l := len(str)
	if offset < 0 {
		offset = l + offset + 1
	}
	offset = max(offset-1, 0)
	mds, err := findPattern(pattern, str, offset, 1, meterOf(L))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	if len(mds) == 0 {
		L.Push(lua.LNil)
		return 0
	}
	md := mds[0]
	nsubs := md.CaptureLength() / 2
	if nsubs == 1 {
		L.Push(lua.LString(str[md.Capture(0):md.Capture(1)]))
		return 1
	}
	for i := 2; i < md.CaptureLength(); i += 2 {
		pushCapture(L, str, md, i)
	}
	return nsubs - 1
}

func strReverse(L *lua.LState) int {
	str := checkStrArg(L, 1)
	out := make([]byte, len(str))
	for i, j := 0, len(str)-1; j >= 0; i, j = i+1, j-1 {
		if i&0xffff == 0 {
			raiseIfDone(L)
		}
		out[i] = str[j]
	}
	L.Push(lua.LString(string(out)))
	return 1
}

func strSub(L *lua.LState) int {
	str := checkStrArg(L, 1)
	start := luaIndexToStringIndex(str, L.CheckInt(2), true)
	end := luaIndexToStringIndex(str, L.OptInt(3, -1), false)
	if start >= len(str) || end < start {
		L.Push(lua.LString(""))
	} else {
		L.Push(lua.LString(str[start:end]))
	}
	return 1
}

func luaIndexToStringIndex(str string, i int, start bool) int {
	if start && i != 0 {
		i--
	}
	l := len(str)
	if i < 0 {
		i = l + i + 1
	}
	i = max(0, i)
	if !start && i > l {
		i = l
	}
	return i
}
