package luavm

import (
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The os library holds only time and date, with the behaviour of Karmada's
// safe os library (itself Argo CD's): os.time{...} uses the local zone and
// defaults hour 12, min 0, sec 0, day/month/year -1; os.date understands a
// leading "!" (UTC), "*t" and the strftime flags below.

func openSafeOs(L *lua.LState) int {
	mod := L.RegisterModule(lua.OsLibName, map[string]lua.LGFunction{
		"time": osTime,
		"date": osDate,
	})
	L.Push(mod)
	return 1
}

func osTime(L *lua.LState) int {
	if L.GetTop() == 0 {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	tbl := L.CheckTable(1)
	field := func(key string, def int) int {
		if n, ok := tbl.RawGetString(key).(lua.LNumber); ok {
			return int(n)
		}
		return def
	}
	t := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	L.Push(lua.LNumber(t.Unix()))
	return 1
}

func osDate(L *lua.LState) int {
	t := time.Now()
	cfmt := "%c"
	if L.GetTop() >= 1 {
		cfmt = L.CheckString(1)
		if strings.HasPrefix(cfmt, "!") {
			t = time.Now().UTC()
			cfmt = strings.TrimLeft(cfmt, "!")
		}
		if L.GetTop() >= 2 {
			t = time.Unix(L.CheckInt64(2), 0)
		}
		if strings.HasPrefix(cfmt, "*t") {
			ret := L.NewTable()
			ret.RawSetString("year", lua.LNumber(t.Year()))
			ret.RawSetString("month", lua.LNumber(t.Month()))
			ret.RawSetString("day", lua.LNumber(t.Day()))
			ret.RawSetString("hour", lua.LNumber(t.Hour()))
			ret.RawSetString("min", lua.LNumber(t.Minute()))
			ret.RawSetString("sec", lua.LNumber(t.Second()))
			ret.RawSetString("wday", lua.LNumber(t.Weekday()+1))
			ret.RawSetString("yday", lua.LNumber(0))
			ret.RawSetString("isdst", lua.LFalse)
			L.Push(ret)
			return 1
		}
	}
	// The format may be as long as the memory budget allows: its output
	// (at most maxDateExpansion times as long) is reserved first, and the
	// formatting charges one instruction per format byte.
	reserveResult(L, "os.date", maxDateExpansion*len(cfmt))
	out, err := strftime(t, cfmt, meterOf(L))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(lua.LString(out))
	return 1
}

// maxDateExpansion bounds how many output bytes one format byte gives: a
// two-byte flag prints at most a Go layout's result (%c, about 20 bytes
// with a long zone name), so 16 per byte.
const maxDateExpansion = 16

// dateFlags maps strftime flags to Go layouts, as coded in Karmada (%a is
// "mon", %c and %x are as written there).
var dateFlags = map[byte]string{
	'a': "mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'c': "02 Jan 06 15:04 MST", 'd': "02",
	'F': "2006-01-02", 'H': "15", 'I': "03", 'm': "01", 'M': "04", 'p': "PM", 'P': "pm", 'S': "05",
	'x': "15/04/05", 'X': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700", 'Z': "MST",
}

// strftime follows gopher-lua's flag scanner: "%%" is a literal percent, a
// trailing lone "%" is kept, unknown flags are copied with their "%".
// Every matchStepChunk format bytes are charged to meter.
func strftime(t time.Time, cfmt string, meter meterFunc) (string, error) {
	var b strings.Builder
	for i := 0; i < len(cfmt); i++ {
		if i%matchStepChunk == matchStepChunk-1 {
			if err := meter(matchStepChunk); err != nil {
				return "", err
			}
		}
		c := cfmt[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(cfmt) && cfmt[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if i == len(cfmt)-1 {
			b.WriteByte('%')
			continue
		}
		i++
		f := cfmt[i]
		if layout, ok := dateFlags[f]; ok {
			b.WriteString(t.Format(layout))
		} else if f == 'w' {
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		} else {
			b.WriteByte('%')
			b.WriteByte(f)
		}
	}
	return b.String(), nil
}
