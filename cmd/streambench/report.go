package main

// runReport is a placeholder until the report command lands; it fails loudly rather than pretending.
func runReport(args []string) error { return usageError("the report command is not implemented yet") }
