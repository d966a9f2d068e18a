package store

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestCheckFormatRecordsAndRefuses(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)

	// A store without a format (new, or from before formats) gets this one.
	if f, err := s.CheckFormat(c); err != nil || f != Format {
		t.Fatalf("CheckFormat on a new store = %d, %v; want %d", f, err, Format)
	}
	kv, err := s.Get(c, FormatKey)
	if err != nil || string(kv.Value) != strconv.Itoa(Format) {
		t.Fatalf("%s = %q, %v; want %d recorded", FormatKey, kv.Value, err, Format)
	}
	if f, err := s.CheckFormat(c); err != nil || f != Format {
		t.Errorf("second CheckFormat = %d, %v; want %d", f, err, Format)
	}

	// A store a newer version wrote is refused, and left as it is.
	newer := strconv.Itoa(Format + 1)
	if _, err := s.Put(c, FormatKey, []byte(newer)); err != nil {
		t.Fatal(err)
	}
	_, err = s.CheckFormat(c)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "newer tether-hub") {
		t.Errorf("CheckFormat of format %s = %v; want ErrFormat naming a newer tether-hub", newer, err)
	}
	if kv, _ := s.Get(c, FormatKey); string(kv.Value) != newer {
		t.Errorf("%s = %q after a refusal; want %s kept", FormatKey, kv.Value, newer)
	}
}

func TestCheckFormatValues(t *testing.T) {
	for _, tc := range []struct {
		value   string
		wantErr string
	}{
		{strconv.Itoa(Format), ""},
		{strconv.Itoa(FormatOldest), ""},
		{strconv.Itoa(Format + 1), "newer tether-hub"},
		{strconv.Itoa(FormatOldest - 1), "not a format number"}, // 0 is no format
		{"x", "not a format number"},
		{"", "not a format number"},
	} {
		_, err := checkFormat(tc.value)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("checkFormat(%q) = %v; want accepted", tc.value, err)
		case tc.wantErr != "" && (!errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("checkFormat(%q) = %v; want ErrFormat containing %q", tc.value, err, tc.wantErr)
		}
	}
}
