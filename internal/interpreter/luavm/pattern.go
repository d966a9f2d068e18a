package luavm

import (
	"fmt"

	"github.com/yuin/gopher-lua/pm"
)

// The pattern matcher of string.find, string.match and string.gmatch.
//
// gopher-lua's pm package parses a Lua pattern into a small program and
// runs it with a recursive backtracking machine that never looks at the
// call's context: `string.find(("a"):rep(400), ".-.-.-x")` explores about
// n⁴/24 paths and ran 42 s under a 1 s deadline, and a long subject recurses
// once per character on the goroutine's stack, outside the memory budget.
//
// This file is the same parser and program (so the same matches, captures
// and error texts, "malformed pattern" cases included), run by an iterative
// machine whose backtrack stack is a heap slice and which reports every
// matchStepChunk executed instructions to a meter. The meter charges them to
// the call's budget, so a pattern call stops with the instruction, memory or
// time budget's error like any Lua loop (see budget.charge). Two deliberate
// differences from pm:
//   - at most maxPatternCaptures captures, as C Lua (LUA_MAXCAPTURES): this
//     bounds the parser's recursion on "((((...";
//   - a back reference to a capture that is still open (`(a%1)`) is the
//     error "invalid capture index" where pm slices out of range and panics.
//
// Derived from github.com/yuin/gopher-lua/pm (MIT License, Copyright (c)
// 2015 Yusuke Inuzuka).

const (
	// matchStepChunk is how many machine instructions run between two calls
	// of the meter. A step costs a few nanoseconds, so the meter (and the
	// deadline it checks) is consulted every few tens of microseconds.
	matchStepChunk = 4096
	// maxPatternCaptures is the most captures a pattern may hold (C Lua's
	// LUA_MAXCAPTURES).
	maxPatternCaptures = 32
	// unknownPos is pm's position for errors without one.
	unknownPos = -2
)

// meterFunc is told that n more machine steps ran; a non-nil error stops the
// match with that error.
type meterFunc func(n int) error

// matchData is pm.MatchData: capture positions, two per capture, shifted
// left by one; the low bit marks a position capture.
type matchData struct {
	captures []uint32
}

func (m *matchData) addPosCapture(s, pos int) {
	for s+1 >= len(m.captures) {
		m.captures = append(m.captures, 0)
	}
	m.captures[s] = (uint32(pos) << 1) | 1
	m.captures[s+1] = (uint32(pos) << 1) | 1
}

func (m *matchData) setCapture(s, pos int) uint32 {
	for s >= len(m.captures) {
		m.captures = append(m.captures, 0)
	}
	v := m.captures[s]
	m.captures[s] = uint32(pos) << 1
	return v
}

// CaptureLength is the number of capture slots (two per capture).
func (m *matchData) CaptureLength() int { return len(m.captures) }

// IsPosCapture reports whether slot idx holds a position capture.
func (m *matchData) IsPosCapture(idx int) bool { return m.captures[idx]&1 == 1 }

// Capture is the position in slot idx.
func (m *matchData) Capture(idx int) int { return int(m.captures[idx] >> 1) }

// patternError is the error type of a malformed pattern: pm's, so the text
// is gopher-lua's ("unexpected EOS at EOS", "invalid ')' at 3").
func patternError(pos int, format string, args ...any) *pm.Error {
	return &pm.Error{Pos: pos, Message: fmt.Sprintf(format, args...)}
}

// findPattern is pm.Find: up to limit matches (all for a negative limit) of
// pattern p in src from offset, with the steps charged to meter.
func findPattern(p, src string, offset, limit int, meter meterFunc) ([]*matchData, error) {
	prog, err := compileLuaPattern(p)
	if err != nil {
		return nil, err
	}
	m := &machine{src: src, insts: prog.insts, meter: meter}
	var matches []*matchData
	for sp := offset; sp <= len(src); {
		ok, nsp, md, err := m.run(sp)
		if err != nil {
			return nil, err
		}
		sp++
		if ok {
			if sp < nsp {
				sp = nsp
			}
			matches = append(matches, md)
		}
		if len(matches) == limit || prog.mustHead {
			break
		}
	}
	if m.steps > 0 { // the last partial chunk counts too
		if err := m.meter(m.steps); err != nil {
			return nil, err
		}
	}
	return matches, nil
}

// program is a compiled pattern.
type program struct {
	insts    []inst
	mustHead bool
}

func compileLuaPattern(p string) (prog program, err error) {
	defer func() {
		if v := recover(); v != nil {
			perr, ok := v.(*pm.Error)
			if !ok {
				panic(v)
			}
			err = perr
		}
	}()
	ps := &patternParser{sc: newScanner(p)}
	pat := ps.parse(true)
	return program{insts: compileSeq(pat), mustHead: pat.mustHead}, nil
}

// frame is an entry of the backtrack stack: an alternative to resume
// (restore false) or a capture slot to restore on the way back.
type frame struct {
	restore bool
	pc, sp  int
	slot    int
	value   uint32
}

// machine runs a program on one subject; stack is reused between start
// positions.
type machine struct {
	src   string
	insts []inst
	meter meterFunc
	steps int
	stack []frame
}

// run is pm's recursiveVM without recursion: a split pushes its second
// branch, a save pushes the slot's old value, and a failure pops until it
// finds a branch to resume, restoring slots on the way.
func (m *machine) run(sp int) (bool, int, *matchData, error) {
	md := &matchData{}
	m.stack = m.stack[:0]
	pc := 0
	for {
		if err := m.charge(1); err != nil {
			return false, sp, md, err
		}
		ok, err := m.step(md, &pc, &sp)
		switch {
		case err != nil:
			return false, sp, md, err
		case ok && m.insts[pc].op == opMatch:
			return true, sp, md, nil
		case ok && m.insts[pc].op == opTailMatch:
			if sp >= len(m.src) {
				return true, sp, md, nil
			}
		case ok:
			continue
		}
		if !m.backtrack(md, &pc, &sp) {
			return false, sp, md, nil
		}
	}
}

// charge counts n steps and hands them to the meter by chunks.
func (m *machine) charge(n int) error {
	m.steps += n
	if m.steps < matchStepChunk {
		return nil
	}
	n, m.steps = m.steps, 0
	return m.meter(n)
}

// step executes insts[pc]: it advances pc and sp and reports true, or
// reports false when the current path fails. It stops (true, pc unchanged)
// on opMatch and opTailMatch, which run decides.
func (m *machine) step(md *matchData, pc, sp *int) (bool, error) {
	in := m.insts[*pc]
	switch in.op {
	case opChar:
		if *sp >= len(m.src) || !in.class.matches(int(m.src[*sp])) {
			return false, nil
		}
		*pc++
		*sp++
	case opMatch, opTailMatch:
	case opJmp:
		*pc = in.a
	case opSplit:
		m.stack = append(m.stack, frame{pc: in.b, sp: *sp})
		*pc = in.a
	case opSave:
		old := md.setCapture(in.a, *sp)
		m.stack = append(m.stack, frame{restore: true, slot: in.a, value: old})
		*pc++
	case opPSave:
		md.addPosCapture(in.a, *sp+1)
		*pc++
	case opBrace:
		return m.brace(in, pc, sp)
	case opNumber:
		return m.backref(md, in, pc, sp)
	}
	return true, nil
}

func (m *machine) backtrack(md *matchData, pc, sp *int) bool {
	for len(m.stack) > 0 {
		f := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if f.restore {
			md.captures[f.slot] = f.value
			continue
		}
		*pc, *sp = f.pc, f.sp
		return true
	}
	return false
}

// brace matches %bxy: a balanced run from x to y. Each byte scanned is a
// step.
func (m *machine) brace(in inst, pc, sp *int) (bool, error) {
	s := *sp
	if s >= len(m.src) || int(m.src[s]) != in.a {
		return false, nil
	}
	count := 1
	for s = s + 1; s < len(m.src); s++ {
		if int(m.src[s]) == in.b {
			count--
		}
		if count == 0 {
			scanned := s + 1 - *sp
			*pc++
			*sp = s + 1
			return true, m.charge(scanned)
		}
		if int(m.src[s]) == in.a {
			count++
		}
	}
	return false, m.charge(s - *sp)
}

// backref matches %1-%9: the text of a closed capture.
func (m *machine) backref(md *matchData, in inst, pc, sp *int) (bool, error) {
	idx := in.a * 2
	if idx >= md.CaptureLength()-1 {
		return false, patternError(unknownPos, "invalid capture index")
	}
	start, end := md.Capture(idx), md.Capture(idx+1)
	if start > end || end > len(m.src) {
		return false, patternError(unknownPos, "invalid capture index")
	}
	capture := m.src[start:end]
	if err := m.charge(len(capture)); err != nil {
		return false, err
	}
	if len(m.src)-*sp < len(capture) || m.src[*sp:*sp+len(capture)] != capture {
		return false, nil
	}
	*pc++
	*sp += len(capture)
	return true, nil
}
