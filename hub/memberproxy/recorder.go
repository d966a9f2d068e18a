package memberproxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
)

// recorder keeps a response's status code for the audit line; it passes
// Flush and Hijack through (the upgrade-aware proxy needs both).
type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection to an upgrade: the code is 101.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("memberproxy: the response writer cannot hijack (HTTP/2); upgrades need HTTP/1.1")
	}
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return hj.Hijack()
}
