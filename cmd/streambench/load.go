package main

// runLoad is a placeholder until the load command lands; it fails loudly rather than pretending.
func runLoad(args []string) error { return usageError("the load command is not implemented yet") }
