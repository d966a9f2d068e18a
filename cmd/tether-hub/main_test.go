package main

import (
	"io"
	"testing"
	"time"

	"github.com/tetherproj/tether/hub"
)

func TestServingCertLifetimeFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--data-dir", "d"}, hub.DefaultServingCertLifetime},
		{[]string{"--data-dir", "d", "--serving-cert-lifetime", "2h"}, 2 * time.Hour},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard, io.Discard)
		if err != nil || cfg.ServingCertLifetime != tc.want {
			t.Errorf("parseFlags(%q) = lifetime %s, %v; want %s", tc.args, cfg.ServingCertLifetime, err, tc.want)
		}
	}
	cfg, _, err := parseFlags([]string{"--data-dir", t.TempDir(), "--serving-cert-lifetime", "30s"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.New(cfg, nil); err == nil {
		t.Errorf("hub.New with --serving-cert-lifetime 30s succeeded; want at least %s refused", hub.MinServingCertLifetime)
	}
}
