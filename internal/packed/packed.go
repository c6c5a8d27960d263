// Package packed reads and writes the compact records the memory store
// and the request journal keep: varints and length-prefixed strings, read
// back from one string so that every string read is a piece of it and
// costs no allocation.
package packed

import "encoding/binary"

// AppendString appends s with its length before it.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Reader reads a record from S, from I on. It trusts the record: what it
// reads was written by this process, so a malformed one is a bug and
// panics.
type Reader struct {
	S string
	I int
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		c := r.S[r.I]
		r.I++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

// Varint reads a zig-zag signed varint, as binary.AppendVarint writes it.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	c := r.S[r.I]
	r.I++
	return c
}

// String reads a string written by AppendString.
func (r *Reader) String() string {
	n := int(r.Uvarint())
	s := r.S[r.I : r.I+n]
	r.I += n
	return s
}
