package main

// runBench is a placeholder until the bench command lands; it fails loudly rather than pretending.
func runBench(args []string) error { return usageError("the bench command is not implemented yet") }
