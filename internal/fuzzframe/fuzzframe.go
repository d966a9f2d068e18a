// Package fuzzframe turns a sequence of protocol messages into one fuzz
// input and back, for the fuzz tests of both ends of the agent stream
// (hub/agentapi, agent/hubclient): each message is its protobuf encoding
// after its length as two big-endian bytes. Decode takes any bytes the
// fuzzer makes: it skips frames that do not unmarshal and takes a
// truncated last frame as it is.
package fuzzframe

import (
	"encoding/binary"

	"google.golang.org/protobuf/proto"
)

// Encode frames msgs. It panics on a message that does not marshal or is
// longer than a frame holds (64 KiB - 1): seeds are the test's own.
func Encode[M proto.Message](msgs ...M) []byte {
	var out []byte
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil || len(b) > 0xffff {
			panic("seed message does not frame")
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
		out = append(out, b...)
	}
	return out
}

// Decode returns the messages of type M that data frames.
func Decode[M any, P interface {
	*M
	proto.Message
}](data []byte) []P {
	var out []P
	for len(data) >= 2 {
		n := min(int(binary.BigEndian.Uint16(data)), len(data)-2)
		m := P(new(M))
		if proto.Unmarshal(data[2:2+n], m) == nil {
			out = append(out, m)
		}
		data = data[2+n:]
	}
	return out
}
