package luavm

import (
	"context"
	"strings"
	"testing"
	"time"
)

// untimed are limits where only the instruction and memory budgets can
// stop a call: the deadline is out of the way, so the error a test expects
// does not depend on the machine's speed or load.
func untimed() Limits {
	l := DefaultLimits()
	l.Timeout = 10 * time.Minute
	l.MaxInstructions = 50_000_000
	l.MaxMemoryBytes = 64 << 20
	return l
}

// subject400 builds ("a"):rep(400) without string.rep.
const subject400 = `local s = "a" for i = 1, 9 do s = s .. s end s = s:sub(1, 400)`

// TestPatternBudget: patterns whose backtracking explores polynomially or
// exponentially many paths stop with the instruction budget's error (the
// matcher's steps count as instructions), instead of running for minutes
// inside one Go call that no deadline reaches.
func TestPatternBudget(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	tests := map[string]string{
		"find .-.-.-x":  `string.find(s, ".-.-.-x")`,
		"match .*.*.*x": `s:match(".*.*.*x")`,
		"gmatch":        `for w in s:gmatch(".-.-.-x") do end`,
		"anchored":      `string.find(s, "^(.-)(.-)(.-)(.-)x$")`,
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) {
			script := "function ReflectStatus(obj)\n" + subject400 + "\n" + call + "\nreturn {}\nend"
			_, err := vm.ReflectStatus(context.Background(), probe(), script)
			if err == nil || !strings.Contains(err.Error(), "lua: instruction budget of 50000000 exceeded") {
				t.Fatalf("ReflectStatus(%s) error = %v; want the instruction budget error", name, err)
			}
			if !IsBudgetError(err) {
				t.Errorf("IsBudgetError(%v) = false; want true", err)
			}
		})
	}
}

// TestPatternDeadline: with only a deadline (no instruction or memory
// budget) the deadline reaches into the matcher: the call ends with the
// deadline's error. gopher-lua's matcher never looked at it (this pattern
// on 400 bytes takes about 10^10 steps).
func TestPatternDeadline(t *testing.T) {
	vm := New(Options{Limits: Limits{Timeout: 50 * time.Millisecond}})
	script := "function ReflectStatus(obj)\n" + subject400 + "\nstring.find(s, \".-.-.-.-x\")\nreturn {}\nend"
	_, err := vm.ReflectStatus(context.Background(), probe(), script)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("ReflectStatus(pathological pattern) error = %v; want the deadline's error", err)
	}
}

// TestPatternResults: ordinary patterns give gopher-lua's results.
func TestPatternResults(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	script := `function ReflectStatus(obj)
  local a, b, c = string.find("registry.io/app:1.2.3", ":(.*)$")
  local img, tag = string.match("registry.io/app:1.2.3", "^(.-):([%d%.]+)$")
  local words = {}
  for w in string.gmatch("one two  three", "%a+") do words[#words + 1] = w end
  local p1, p2 = string.match("hello", "()ll()")
  local bal = string.match("f(a(b)c)d", "%b()")
  local rep = string.match("abcabc", "(abc)%1")
  return {a = a, b = b, c = c, img = img, tag = tag, words = table.concat(words, ","), p1 = p1, p2 = p2, bal = bal, rep = rep}
end`
	status, err := vm.ReflectStatus(context.Background(), probe(), script)
	want := `{"a":16,"b":21,"bal":"(a(b)c)","c":"1.2.3","img":"registry.io/app","p1":3,"p2":5,"rep":"abc","tag":"1.2.3","words":"one,two,three"}`
	if err != nil || string(status.Raw) != want {
		t.Fatalf("ReflectStatus(patterns) = %s, %v; want %s", status.Raw, err, want)
	}
}

// TestPatternErrors: malformed patterns fail with gopher-lua's messages;
// too many captures and back references to open captures are errors, not
// panics or unbounded recursion.
func TestPatternErrors(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	tests := map[string]struct{ call, want string }{
		"unfinished capture": {`string.find("abc", "(a")`, "unfinished capture"},
		"invalid )":          {`string.find("abc", "a)")`, "invalid ')' at 0"},
		"EOS in set":         {`string.find("abc", "[a")`, "unexpected EOS"},
		"capture %0":         {`string.find("abc", "%0")`, "invalid capture index"},
		"open back ref":      {`string.find("aa", "(a%1)")`, "invalid capture index"},
		"too many captures":  {`local p = "" for i = 1, 40 do p = p .. "(" end string.find("a", p)`, "too many captures (at most 32)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			script := "function ReflectStatus(obj)\n" + tt.call + "\nreturn {}\nend"
			_, err := vm.ReflectStatus(context.Background(), probe(), script)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReflectStatus(%s) error = %v; want one containing %q", name, err, tt.want)
			}
		})
	}
}

// TestAllocationsReservedFirst: one operation that would build a result
// past the memory budget is refused before it allocates, with an error
// naming the operation and the size. The strings are built by doubling up
// to 4 MiB (under the 64 MiB budget); each operation would then make one
// 4 GiB or larger string. The error text "would allocate" is only produced
// by the check made before the allocation.
func TestAllocationsReservedFirst(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	build := `local s = "x" for i = 1, 22 do s = s .. s end`
	tests := map[string]struct{ body, want string }{
		"concat chain": {`local t = s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s`,
			"the .. operator would allocate 83886080 bytes"},
		"table.concat": {`local t = {} for i = 1, 1000 do t[i] = s end local r = table.concat(t)`,
			"table.concat would allocate 4194304000 bytes"},
		"table.concat separator": {`local t = {} for i = 1, 1000 do t[i] = "a" end local r = table.concat(t, s)`,
			"table.concat would allocate 4190110696 bytes"},
		"string.format widths": {`local f, a = "", {} for i = 1, 200 do f = f .. "%999999s" a[i] = "x" end local r = string.format(f, unpack(a))`,
			"string.format would allocate"},
		"string.format %s": {`local r = string.format("%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s", s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s)`,
			"string.format would allocate"},
		"os.date": {`local f = "%c" for i = 1, 22 do f = f .. f end local r = os.date(f)`,
			"os.date would allocate 134217728 bytes"},
		"string.rep": {`local r = string.rep(s, 1000)`, "string.rep is not supported"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			script := "function ReflectStatus(obj)\n" + build + "\n" + tt.body + "\nreturn {}\nend"
			_, err := vm.ReflectStatus(context.Background(), probe(), script)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReflectStatus(%s) error = %v; want one containing %q", name, err, tt.want)
			}
			if name != "string.rep" && !strings.Contains(err.Error(), "lua: memory budget of 67108864 bytes exceeded") {
				t.Errorf("ReflectStatus(%s) error = %v; want the memory budget named", name, err)
			}
		})
	}
}

// TestConcatSemantics: the rewritten `..` behaves as OP_CONCAT: numbers
// become strings, errors name the operand types at the concatenation's
// line, __concat metamethods of the string table are honoured, and
// `return a .. b` still returns one value.
func TestConcatSemantics(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	script := `function ReflectStatus(obj)
  local n = 1 .. 2 .. "x" .. 1.5
  local function f() return "a" .. "b" end
  local t = {f()}
  local nested = ("p" .. "q") .. ("r" .. obj.kind)
  return {n = n, count = #t, nested = nested, long = obj.metadata.name .. "-" .. obj.metadata.namespace}
end`
	status, err := vm.ReflectStatus(context.Background(), probe(), script)
	want := `{"count":1,"long":"p-lab","n":"12x1.5","nested":"pqrProbe"}`
	if err != nil || string(status.Raw) != want {
		t.Fatalf("ReflectStatus(concat) = %s, %v; want %s", status.Raw, err, want)
	}
	_, err = vm.ReflectStatus(context.Background(), probe(), "function ReflectStatus(obj)\nlocal x\nlocal y = \"a\" .. x .. \"b\"\nend")
	if err == nil || !strings.HasPrefix(err.Error(), "<string>:3: cannot perform concat operation between nil and string") {
		t.Fatalf("ReflectStatus(concat nil) error = %v; want <string>:3: cannot perform concat operation between nil and string", err)
	}
	meta := `string.__concat = function(a, b) return "meta" end
function ReflectStatus(obj) return {v = "a" .. {}} end`
	status, err = vm.ReflectStatus(context.Background(), probe(), meta)
	if err != nil || string(status.Raw) != `{"v":"meta"}` {
		t.Fatalf("ReflectStatus(__concat) = %s, %v; want {\"v\":\"meta\"}", status.Raw, err)
	}
}

// TestResultReservedFirst: a result whose JSON would be far larger than
// the table (one 4 MiB string referenced 20 times) is refused before it is
// encoded, with the memory budget's error; the script itself stays well
// under the budget.
func TestResultReservedFirst(t *testing.T) {
	vm := New(Options{Limits: untimed()})
	script := `function ReflectStatus(obj)
  local s = "x" for i = 1, 22 do s = s .. s end
  local t = {}
  for i = 1, 20 do t[i] = s end
  return {items = t}
end`
	_, err := vm.ReflectStatus(context.Background(), probe(), script)
	if err == nil || !strings.Contains(err.Error(), "convert lua result: lua: memory budget of 67108864 bytes exceeded: the result's JSON would allocate") {
		t.Fatalf("ReflectStatus(large result) error = %v; want the memory budget error before encoding", err)
	}
}
