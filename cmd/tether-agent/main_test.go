package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestRunRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"no flags", nil, 2, "--hub"},
		{"no certificate", []string{"--hub", "h:1", "--data-dir", "/tmp/x"}, 2, "--cert"},
		{"token without ca hash", []string{"--hub", "h:1", "--token", "a.b", "--data-dir", "/tmp/x"}, 2, "--ca-hash"},
		{"bad log format", []string{"--hub", "h:1", "-log-format", "xml"}, 2, "format"},
		{"unknown flag", []string{"--nope"}, 2, "nope"},
		{"argument", []string{"extra"}, 2, "unexpected argument"},
		{"labels without =", []string{"--hub", "h:1", "--labels", "tier", "--data-dir", "/tmp/x"}, 2, "--labels"},
		{"bad label key", []string{"--hub", "h:1", "--cert", "c", "--key", "k", "--ca", "a", "--labels", "bad key=x", "--data-dir", "/tmp/x"}, 2, "--labels: key"},
		{"state secret without name", []string{"--hub", "h:1", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x", "--state-secret", "ns"}, 2, "--state-secret"},
		{"state secret bad namespace", []string{"--hub", "h:1", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x", "--state-secret", "Bad_NS/s"}, 2, "--state-secret"},
		{"hub list entry without port", []string{"--hub", "h:1,h2", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}, 2, `--hub entry 2 of 2, "h2": want host:port`},
		{"hub list empty entry", []string{"--hub", "h:1,,h:2", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}, 2, `--hub entry 2 of 3, ""`},
		{"hub list trailing comma", []string{"--hub", "h:1,h:2,", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}, 2, `--hub entry 3 of 3, ""`},
		{"hub list twice", []string{"--hub", "h:1, h:1", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}, 2, `--hub entry 2 of 2, "h:1": the same address as entry 1`},
		{"hub list bad port", []string{"--hub", "h:1,h:x", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}, 2, `--hub entry 2 of 2, "h:x": want host:port: port "x"`},
		{"hub list accepted, files missing", []string{"--hub", "hub-0:8443,hub-1:8443", "--cert", "/nonexistent", "--key", "k", "--ca", "/nonexistent/ca", "--data-dir", "/tmp/x"}, 1, "--ca"},
		{"bad memory limit", []string{"--hub", "h:1", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x", "--memory-limit", "lots"}, 2, "--memory-limit"},
		{"missing files", []string{"--hub", "h:1", "--cert", "/nonexistent", "--key", "k", "--ca", "/nonexistent/ca", "--data-dir", "/tmp/x"}, 1, "--ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "tether-agent ") {
		t.Errorf("run(--version) = %d, %q; want 0 and the version line", code, stdout.String())
	}
}

func TestHubFlag(t *testing.T) {
	tests := []struct {
		hub  string
		want []string
	}{
		{"h:1", []string{"h:1"}},
		{"hub-0.hub:8443,hub-1.hub:8443,10.0.0.3:8443", []string{"hub-0.hub:8443", "hub-1.hub:8443", "10.0.0.3:8443"}},
		{" a:1 , [::1]:2 ", []string{"a:1", "[::1]:2"}},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		args := []string{"--hub", tt.hub, "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}
		o, err := parse(args, &stderr)
		cfg := o.agent
		if err != nil {
			t.Fatalf("parse(--hub %q): %v", tt.hub, err)
		}
		if !slices.Equal(cfg.HubAddrs, tt.want) {
			t.Errorf("parse(--hub %q).HubAddrs = %q; want %q", tt.hub, cfg.HubAddrs, tt.want)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("parse(--hub %q).Validate() = %v; want nil", tt.hub, err)
		}
	}
}

func TestTopologyFlags(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parse([]string{"--hub", "h:1", "--provider", "kwok", "--region", "eu", "--zones", "eu-1a, eu-1b",
		"--labels", "tier=edge,team=web"}, &stderr)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	got := o.agent.Topology
	if got.GetProvider() != "kwok" || got.GetRegion() != "eu" || strings.Join(got.GetZones(), ",") != "eu-1a,eu-1b" ||
		got.GetLabels()["tier"] != "edge" || got.GetLabels()["team"] != "web" || len(got.GetLabels()) != 2 {
		t.Errorf("Topology = %v; want provider kwok, region eu, zones eu-1a,eu-1b, labels tier=edge team=web", got)
	}
	o, err = parse([]string{"--hub", "h:1"}, &stderr)
	if err != nil || o.agent.Topology != nil {
		t.Errorf("parse without topology flags = %v, %v; want nil topology", o.agent.Topology, err)
	}
}

// TestInterpreterFlags: the Lua bounds and the webhook policy reach the
// agent's config; bad values are refused naming their flag.
func TestInterpreterFlags(t *testing.T) {
	base := []string{"--hub", "h:1", "--cert", "c", "--key", "k", "--ca", "a", "--data-dir", "/tmp/x"}
	o, err := parse(append(base, "--lua-memory-fraction", "0.25", "--lua-concurrency", "4",
		"--interpreter-webhook-hosts", "hooks.example.com, *.svc", "--webhook-allow-cidrs", "127.0.0.1/8"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.agent
	if cfg.LuaMemoryFraction != 0.25 || cfg.LuaConcurrency != 4 || !slices.Equal(cfg.Webhooks.Hosts, []string{"hooks.example.com", "*.svc"}) ||
		cfg.Webhooks.Refuse || len(cfg.WebhookAllowCIDRs) != 1 || cfg.WebhookAllowCIDRs[0].String() != "127.0.0.0/8" {
		t.Errorf("parse = fraction %g, concurrency %d, %+v, %v; want 0.25, 4, the two hosts, 127.0.0.0/8",
			cfg.LuaMemoryFraction, cfg.LuaConcurrency, cfg.Webhooks, cfg.WebhookAllowCIDRs)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v; want nil", err)
	}
	if o, err := parse(append(base, "--refuse-interpreter-webhooks"), io.Discard); err != nil || !o.agent.Webhooks.Refuse {
		t.Errorf("parse(--refuse-interpreter-webhooks) = %+v, %v; want Refuse", o.agent.Webhooks, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lua-memory-fraction", "1.5"}, "--lua-memory-fraction 1.5"},
		{[]string{"--lua-memory-fraction", "-0.1"}, "--lua-memory-fraction -0.1"},
		{[]string{"--lua-concurrency", "-1"}, "--lua-concurrency -1"},
		{[]string{"--interpreter-webhook-hosts", "bad host"}, "--interpreter-webhook-hosts"},
		{[]string{"--refuse-interpreter-webhooks", "--interpreter-webhook-hosts", "h.example.com"}, "not with --refuse-interpreter-webhooks"},
		{[]string{"--webhook-allow-cidrs", "localhost"}, "webhook-allow-cidrs"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), append(base, tc.args...), io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%q) = %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
