package fuzzframe

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestDecodeReturnsWhatEncodeFramed(t *testing.T) {
	in := []*wrapperspb.StringValue{wrapperspb.String("a"), wrapperspb.String(""), wrapperspb.String("ccc")}
	data := Encode(in...)
	got := Decode[wrapperspb.StringValue](data)
	if len(got) != len(in) {
		t.Fatalf("Decode(Encode(%d messages)) = %d messages", len(in), len(got))
	}
	for i := range in {
		if !proto.Equal(got[i], in[i]) {
			t.Errorf("message %d = %v; want %v", i, got[i], in[i])
		}
	}
	// A truncated last frame is taken as it is: "ccc" cut to "c" does not
	// unmarshal as a string field, so only the first two come back.
	if got := Decode[wrapperspb.StringValue](data[:len(data)-2]); len(got) != 2 {
		t.Errorf("Decode of a truncated input = %d messages; want 2", len(got))
	}
}
