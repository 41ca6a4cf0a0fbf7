// Package jsonwire holds the JSON pieces every wire dialect in protocol/ shares: a strict,
// allocation-free Scanner that reads the few fields a stream decoder needs from each frame;
// AppendString, which writes a JSON string into a reused frame buffer; CutPlainString for the
// checkers' byte-for-byte fast paths; a Cursor that matches decoded text pieces against a
// script's expected text without concatenating it; and the small request/error helpers both
// provider wires need (MarshalNoHTML, DescribeError, Excerpt, ReadProviderError). They live in
// one place so the dialects cannot drift apart in what they accept or emit.
package jsonwire
