package main

// runCompare is a placeholder until the compare command lands; it fails loudly rather than pretending.
func runCompare(args []string) error { return usageError("the compare command is not implemented yet") }
