package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewJSON(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(Options{Name: "tether-hub", Format: "json", Output: &buf})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	log.Named("store").Info("opened", "data_dir", "/tmp/x")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("output %q is not JSON: %v", buf.String(), err)
	}
	if line["@module"] != "tether-hub.store" || line["data_dir"] != "/tmp/x" || line["@message"] != "opened" {
		t.Errorf("line = %v; want module tether-hub.store, data_dir /tmp/x, message opened", line)
	}
}

func TestNewTextLevel(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(Options{Name: "agent", Level: "warn", Output: &buf})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	log.Info("hidden")
	log.Warn("shown", "cluster", "edge-1")
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, "[WARN]  agent: shown: cluster=edge-1") {
		t.Errorf("output = %q; want only the warning in text form", out)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, opts := range []Options{{Format: "xml"}, {Level: "loud"}} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) = nil error; want an error", opts)
		}
	}
}
