package main

// runGate is a placeholder until the gate command lands; it fails loudly rather than pretending.
func runGate(args []string) error { return usageError("the gate command is not implemented yet") }
