package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/internal/pprofserve"
)

// TestPprofAddrFlag: --pprof-addr is off by default and, when given,
// serves Go's profiles there.
func TestPprofAddrFlag(t *testing.T) {
	o, err := parseOptions([]string{"--data-dir", "/d"}, io.Discard, io.Discard)
	if err != nil || o.pprofAddr != "" {
		t.Fatalf("parseOptions() = %q, %v; want no pprof address by default", o.pprofAddr, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	o, err = parseOptions([]string{"--data-dir", "/d", "--pprof-addr", addr}, io.Discard, io.Discard)
	if err != nil || o.pprofAddr != addr {
		t.Fatalf("parseOptions(--pprof-addr %s) = %q, %v; want it", addr, o.pprofAddr, err)
	}
	stop, err := pprofserve.Serve(o.pprofAddr, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Errorf("GET /debug/pprof/heap = %d %.100q; want a heap profile", resp.StatusCode, body)
	}
}
