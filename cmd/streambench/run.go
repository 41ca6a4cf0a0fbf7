package main

// runRun is a placeholder until the run command lands; it fails loudly rather than pretending.
func runRun(args []string) error { return usageError("the run command is not implemented yet") }
