package main

// runMock is a placeholder until the mock command lands; it fails loudly rather than pretending.
func runMock(args []string) error { return usageError("the mock command is not implemented yet") }
