package luavm

import "github.com/yuin/gopher-lua/pm"

// The pattern parser and compiler, as gopher-lua's pm (see pattern.go):
// the scanner's quirks are kept so that every pattern parses as there.
// Errors are raised as *pm.Error panics and recovered by
// compileLuaPattern, as in pm.

// scanner walks a pattern byte by byte; Pos is pm.EOS past the end.
type scanner struct {
	src     string
	pos     int
	started bool
	saved   struct {
		pos     int
		started bool
	}
}

func newScanner(src string) *scanner { return &scanner{src: src} }

func (sc *scanner) length() int { return len(sc.src) }

func (sc *scanner) next() int {
	if !sc.started {
		sc.started = true
		if len(sc.src) == 0 {
			sc.pos = pm.EOS
		}
	} else {
		sc.pos = sc.nextPos()
	}
	if sc.pos == pm.EOS {
		return pm.EOS
	}
	return int(sc.src[sc.pos])
}

func (sc *scanner) nextPos() int {
	if sc.pos == pm.EOS || sc.pos >= len(sc.src)-1 {
		return pm.EOS
	}
	if !sc.started {
		return 0
	}
	return sc.pos + 1
}

func (sc *scanner) peek() int {
	cureof := sc.pos == pm.EOS
	ch := sc.next()
	if !cureof {
		if sc.pos == pm.EOS {
			sc.pos = len(sc.src) - 1
		} else {
			sc.pos--
			if sc.pos < 0 {
				sc.pos = 0
				sc.started = false
			}
		}
	}
	return ch
}

func (sc *scanner) save() { sc.saved.pos, sc.saved.started = sc.pos, sc.started }

func (sc *scanner) restore() { sc.pos, sc.started = sc.saved.pos, sc.saved.started }

type opCode int

const (
	opChar opCode = iota
	opMatch
	opTailMatch
	opJmp
	opSplit
	opSave
	opPSave
	opBrace
	opNumber
)

// inst is one machine instruction; a and b are its operands (jump targets,
// capture slots, brace characters, capture number).
type inst struct {
	op    opCode
	class class
	a, b  int
}

// class is a character class.
type class interface{ matches(ch int) bool }

type dotClass struct{}

func (dotClass) matches(int) bool { return true }

type charClass struct{ ch int }

func (c charClass) matches(ch int) bool { return c.ch == ch }

// singleClass is %a, %d ... (upper case: the complement), or %x for any
// other x: that character.
type singleClass struct{ class int }

func (c singleClass) matches(ch int) bool {
	var ret bool
	switch c.class {
	case 'a', 'A':
		ret = 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z'
	case 'c', 'C':
		ret = (0x00 <= ch && ch <= 0x1F) || ch == 0x7F
	case 'd', 'D':
		ret = '0' <= ch && ch <= '9'
	case 'l', 'L':
		ret = 'a' <= ch && ch <= 'z'
	case 'p', 'P':
		ret = (0x21 <= ch && ch <= 0x2f) || (0x3a <= ch && ch <= 0x40) || (0x5b <= ch && ch <= 0x60) || (0x7b <= ch && ch <= 0x7e)
	case 's', 'S':
		switch ch {
		case ' ', '\f', '\n', '\r', '\t', '\v':
			ret = true
		}
	case 'u', 'U':
		ret = 'A' <= ch && ch <= 'Z'
	case 'w', 'W':
		ret = '0' <= ch && ch <= '9' || 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z'
	case 'x', 'X':
		ret = '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
	case 'z', 'Z':
		ret = ch == 0
	default:
		return ch == c.class
	}
	if 'A' <= c.class && c.class <= 'Z' {
		return !ret
	}
	return ret
}

type setClass struct {
	not     bool
	classes []class
}

func (c *setClass) matches(ch int) bool {
	for _, cl := range c.classes {
		if cl.matches(ch) {
			return !c.not
		}
	}
	return c.not
}

type rangeClass struct{ begin, end class }

func (c rangeClass) matches(ch int) bool {
	begin, ok1 := c.begin.(charClass)
	end, ok2 := c.end.(charClass)
	return ok1 && ok2 && begin.ch <= ch && ch <= end.ch
}

// Pattern tree nodes.
type (
	singlePattern struct{ class class }
	seqPattern    struct {
		mustHead, mustTail bool
		patterns           []any
	}
	repeatPattern struct {
		kind  int
		class class
	}
	posCapPattern struct{}
	capPattern    struct{ pattern *seqPattern }
	numberPattern struct{ n int }
	bracePattern  struct{ begin, end int }
)

type patternParser struct {
	sc       *scanner
	captures int
}

func (ps *patternParser) parseClass(allowSet bool) class {
	sc := ps.sc
	ch := sc.next()
	switch ch {
	case '%':
		return singleClass{sc.next()}
	case '.':
		if allowSet {
			return dotClass{}
		}
		return charClass{ch}
	case '[':
		if allowSet {
			return ps.parseClassSet()
		}
		return charClass{ch}
	case pm.EOS:
		panic(patternError(sc.pos, "unexpected EOS"))
	default:
		return charClass{ch}
	}
}

func (ps *patternParser) parseClassSet() class {
	sc := ps.sc
	set := &setClass{}
	if sc.peek() == '^' {
		set.not = true
		sc.next()
	}
	isRange := false
	for {
		switch ch := sc.peek(); ch {
		case pm.EOS:
			panic(patternError(sc.pos, "unexpected EOS"))
		case ']':
			if len(set.classes) > 0 {
				sc.next()
				if isRange {
					set.classes = append(set.classes, charClass{'-'})
				}
				return set
			}
			set.classes = append(set.classes, ps.parseClass(false))
		case '-':
			if len(set.classes) > 0 {
				sc.next()
				isRange = true
				continue
			}
			set.classes = append(set.classes, ps.parseClass(false))
		default:
			set.classes = append(set.classes, ps.parseClass(false))
		}
		if isRange {
			n := len(set.classes)
			begin, end := set.classes[n-2], set.classes[n-1]
			set.classes = append(set.classes[:n-2], rangeClass{begin, end})
			isRange = false
		}
	}
}

func (ps *patternParser) parse(toplevel bool) *seqPattern {
	sc := ps.sc
	pat := &seqPattern{}
	if toplevel && sc.peek() == '^' {
		sc.next()
		pat.mustHead = true
	}
	for {
		ch := sc.peek()
		switch ch {
		case '%':
			pat.patterns = append(pat.patterns, ps.parsePercent())
		case '.', '[', ']':
			pat.patterns = append(pat.patterns, &singlePattern{ps.parseClass(true)})
		case ')':
			if toplevel {
				panic(patternError(sc.pos, "invalid ')'"))
			}
			return pat
		case '(':
			pat.patterns = append(pat.patterns, ps.parseCapture())
		case '*', '+', '-', '?':
			sc.next()
			if n := len(pat.patterns); n > 0 {
				if sp, ok := pat.patterns[n-1].(*singlePattern); ok {
					pat.patterns[n-1] = &repeatPattern{ch, sp.class}
					continue
				}
			}
			pat.patterns = append(pat.patterns, &singlePattern{charClass{ch}})
		case '$':
			if toplevel && (sc.nextPos() == sc.length()-1 || sc.nextPos() == pm.EOS) {
				pat.mustTail = true
			} else {
				pat.patterns = append(pat.patterns, &singlePattern{charClass{ch}})
			}
			sc.next()
		case pm.EOS:
			sc.next()
			return pat
		default:
			sc.next()
			pat.patterns = append(pat.patterns, &singlePattern{charClass{ch}})
		}
	}
}

// parsePercent parses %1-%9, %bxy or a class escape.
func (ps *patternParser) parsePercent() any {
	sc := ps.sc
	sc.save()
	sc.next()
	switch sc.peek() {
	case '0':
		panic(patternError(sc.pos, "invalid capture index"))
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return &numberPattern{sc.next() - '0'}
	case 'b':
		sc.next()
		begin := sc.next()
		return &bracePattern{begin, sc.next()}
	default:
		sc.restore()
		return &singlePattern{ps.parseClass(true)}
	}
}

// parseCapture parses "()" or "(...)"; at most maxPatternCaptures.
func (ps *patternParser) parseCapture() any {
	sc := ps.sc
	sc.next()
	if ps.captures++; ps.captures > maxPatternCaptures {
		panic(patternError(sc.pos, "too many captures (at most %d)", maxPatternCaptures))
	}
	if sc.peek() == ')' {
		sc.next()
		return &posCapPattern{}
	}
	ret := &capPattern{ps.parse(false)}
	if sc.peek() != ')' {
		panic(patternError(sc.pos, "unfinished capture"))
	}
	sc.next()
	return ret
}

// compiler emits the program of a pattern tree.
type compiler struct {
	insts   []inst
	capture int
}

// compileSeq compiles a top-level pattern: slot 0 is the match's start,
// slot 1 its end.
func compileSeq(pat *seqPattern) []inst {
	c := &compiler{insts: []inst{{op: opSave, a: 0, b: -1}}, capture: 2}
	c.emit(pat)
	if pat.mustTail {
		c.insts = append(c.insts, inst{op: opSave, a: 1, b: -1}, inst{op: opTailMatch, a: -1, b: -1})
	}
	return append(c.insts, inst{op: opSave, a: 1, b: -1}, inst{op: opMatch, a: -1, b: -1})
}

func (c *compiler) emit(p any) {
	switch pat := p.(type) {
	case *singlePattern:
		c.insts = append(c.insts, inst{op: opChar, class: pat.class, a: -1, b: -1})
	case *seqPattern:
		for _, sub := range pat.patterns {
			c.emit(sub)
		}
	case *repeatPattern:
		c.emitRepeat(pat)
	case *posCapPattern:
		c.insts = append(c.insts, inst{op: opPSave, a: c.capture, b: -1})
		c.capture += 2
	case *capPattern:
		c0, c1 := c.capture, c.capture+1
		c.capture += 2
		c.insts = append(c.insts, inst{op: opSave, a: c0, b: -1})
		c.emit(pat.pattern)
		c.insts = append(c.insts, inst{op: opSave, a: c1, b: -1})
	case *bracePattern:
		c.insts = append(c.insts, inst{op: opBrace, a: pat.begin, b: pat.end})
	case *numberPattern:
		c.insts = append(c.insts, inst{op: opNumber, a: pat.n, b: -1})
	}
}

func (c *compiler) emitRepeat(pat *repeatPattern) {
	idx := len(c.insts)
	char := inst{op: opChar, class: pat.class, a: -1, b: -1}
	switch pat.kind {
	case '*':
		c.insts = append(c.insts, inst{op: opSplit, a: idx + 1, b: idx + 3}, char, inst{op: opJmp, a: idx, b: -1})
	case '+':
		c.insts = append(c.insts, char, inst{op: opSplit, a: idx, b: idx + 2})
	case '-':
		c.insts = append(c.insts, inst{op: opSplit, a: idx + 3, b: idx + 1}, char, inst{op: opJmp, a: idx, b: -1})
	case '?':
		c.insts = append(c.insts, inst{op: opSplit, a: idx + 1, b: idx + 2}, char)
	}
}
