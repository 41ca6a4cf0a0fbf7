// Package jsonwire holds the JSON pieces the wire dialects in protocol/ share, so they cannot
// drift apart in what they accept or emit: a strict, allocation-free Scanner for the fields a
// stream decoder reads, AppendString for frames built in reused buffers, CutPlainString for
// the checkers' fast paths, a Cursor that follows decoded text against a script without
// concatenating it, and the provider wires' kit (requests, error bodies, frame buffers).
package jsonwire
