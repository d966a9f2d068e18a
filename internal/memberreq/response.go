package memberreq

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Recorder keeps a response's status code for the audit lines of both
// ends; it passes Flush and Hijack through (the upgrade-aware proxy needs
// both).
type Recorder struct {
	http.ResponseWriter
	// Code is the status written, 101 for an upgrade, 0 before any.
	Code int
}

func (r *Recorder) WriteHeader(code int) {
	if r.Code == 0 {
		r.Code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *Recorder) Write(p []byte) (int, error) {
	if r.Code == 0 {
		r.Code = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection to an upgrade: the code is 101.
func (r *Recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("memberreq: the response writer cannot hijack (HTTP/2); upgrades need HTTP/1.1")
	}
	if r.Code == 0 {
		r.Code = http.StatusSwitchingProtocols
	}
	return hj.Hijack()
}

// WriteStatus writes a failure as a Kubernetes Status object, which
// kubectl prints.
func WriteStatus(w http.ResponseWriter, code int, msg string) {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: msg, Code: int32(code), Reason: metav1.StatusReason(strings.ReplaceAll(http.StatusText(code), " ", ""))}
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
