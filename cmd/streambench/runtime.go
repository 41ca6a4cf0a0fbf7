package main

// runRuntime is a placeholder until the runtime command lands; it fails loudly rather than pretending.
func runRuntime(args []string) error { return usageError("the runtime command is not implemented yet") }
