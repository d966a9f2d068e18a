package luavm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// errStepLimit stops a fuzzed match that explores too much.
var errStepLimit = errors.New("step limit")

// fuzzMaxSteps bounds one fuzzed match, in matcher steps.
const fuzzMaxSteps = 200_000

// FuzzLuaStringLib feeds pattern/subject pairs to the metered matcher and
// to string.find, string.match and string.gmatch in a sandbox with a small
// instruction budget. Nothing may panic; the Lua calls succeed or fail with
// a pattern error or a budget error; and whenever the matcher finishes
// within its step limit it agrees with gopher-lua's pm (same matches and
// captures, or the same error) — pm explores the same paths, so it finishes
// too.
func FuzzLuaStringLib(f *testing.F) {
	for _, seed := range [][2]string{
		{".-.-.-x", strings.Repeat("a", 40)}, {"^(.-):([%d%.]+)$", "registry.io/app:1.2.3"},
		{"%b()", "f(a(b)c)d"}, {"(abc)%1", "abcabc"}, {"()ll()", "hello"}, {"[%a-z]+", "ab-cd"},
		{"[^%s]+$", "a b c"}, {"(a%1)", "aa"}, {"%", "x"}, {"[a", "a"}, {"a)", "a"}, {"$", ""},
		{"^$", ""}, {"(()", "x"}, {"%f[%w]", "x y"}, {"[]]", "]"}, {"[-a]", "-"}, {"a-$", "aaa"},
	} {
		f.Add(seed[0], seed[1], 1)
	}
	limits := DefaultLimits()
	limits.Timeout = time.Minute
	limits.MaxInstructions = 2 * fuzzMaxSteps
	vm := New(Options{Limits: limits})
	f.Fuzz(func(t *testing.T, pattern, subject string, init int) {
		if len(pattern) > 64 || len(subject) > 256 {
			return
		}
		init = init % (len(subject) + 2)
		compareWithPM(t, pattern, subject, init)
		checkLuaCalls(t, vm, pattern, subject, init)
	})
}

func compareWithPM(t *testing.T, pattern, subject string, init int) {
	offset := max(init, 0)
	steps := 0
	meter := func(n int) error {
		if steps += n; steps > fuzzMaxSteps {
			return errStepLimit
		}
		return nil
	}
	ours, err := findPattern(pattern, subject, offset, -1, meter)
	if errors.Is(err, errStepLimit) {
		return
	}
	theirs, perr, panicked := pmFind(pattern, subject, offset)
	if panicked {
		return // pm slices out of range on an open back reference
	}
	if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
		t.Fatalf("find(%q, %q) error = %v; pm: %v", pattern, subject, err, perr)
	}
	if got, want := captures(ours), pmCaptures(theirs); !reflect.DeepEqual(got, want) {
		t.Fatalf("find(%q, %q) = %v; pm: %v", pattern, subject, got, want)
	}
}

func pmFind(pattern, subject string, offset int) (mds []*pm.MatchData, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	mds, err = pm.Find(pattern, []byte(subject), offset, -1)
	return mds, err, false
}

func captures(mds []*matchData) [][]int {
	out := [][]int{}
	for _, md := range mds {
		var c []int
		for i := 0; i < md.CaptureLength(); i++ {
			c = append(c, md.Capture(i)*2+map[bool]int{true: 1}[md.IsPosCapture(i)])
		}
		out = append(out, c)
	}
	return out
}

func pmCaptures(mds []*pm.MatchData) [][]int {
	out := [][]int{}
	for _, md := range mds {
		var c []int
		for i := 0; i < md.CaptureLength(); i++ {
			c = append(c, md.Capture(i)*2+map[bool]int{true: 1}[md.IsPosCapture(i)])
		}
		out = append(out, c)
	}
	return out
}

// checkLuaCalls runs the three functions through the sandbox; the pattern
// and subject reach Lua as the object's fields.
func checkLuaCalls(t *testing.T, vm *VM, pattern, subject string, init int) {
	obj := probe()
	obj.Object["spec"] = map[string]any{"p": lua.LString(pattern).String(), "s": subject, "init": int64(init)}
	for _, call := range []string{
		`string.find(o.spec.s, o.spec.p, o.spec.init)`,
		`string.match(o.spec.s, o.spec.p, o.spec.init)`,
		`for a in string.gmatch(o.spec.s, o.spec.p) do end`,
	} {
		script := fmt.Sprintf("function ReflectStatus(o)\n%s\nreturn {}\nend", call)
		_, err := vm.ReflectStatus(context.Background(), obj, script)
		if err != nil && !IsBudgetError(err) && !isPatternError(err) {
			t.Fatalf("%s with pattern %q, subject %q: unexpected error %v", call, pattern, subject, err)
		}
	}
}

// isPatternError reports the errors a malformed pattern raises.
func isPatternError(err error) bool {
	for _, s := range []string{"unexpected EOS", "invalid capture index", "unfinished capture", "invalid ')'", "too many captures"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}
