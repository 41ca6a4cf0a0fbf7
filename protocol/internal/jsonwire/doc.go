// Package jsonwire holds the allocation-free JSON pieces every wire dialect in protocol/
// shares: a strict Scanner that reads the few fields a stream decoder needs from each frame,
// AppendString that writes a JSON string into a reused frame buffer, and a Cursor that
// matches streamed text pieces against a script's expected text without concatenating it.
// They live in one place so the dialects cannot drift apart in what they accept or emit.
package jsonwire
