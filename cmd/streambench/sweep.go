package main

// runSweep is a placeholder until the sweep command lands; it fails loudly rather than pretending.
func runSweep(args []string) error { return usageError("the sweep command is not implemented yet") }
