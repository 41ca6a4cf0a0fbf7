package main

// runScenarios is a placeholder until the scenarios command lands; it fails loudly rather than pretending.
func runScenarios(args []string) error { return usageError("the scenarios command is not implemented yet") }
