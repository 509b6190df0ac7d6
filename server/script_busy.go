package server

// allowedWhileBusy reports whether a command may run while a script is
// busy: Redis's allow-busy commands that matter here.
func allowedWhileBusy(args [][]byte) bool {
	switch {
	case len(args) == 2 && (equalFold(args[0], "script") || equalFold(args[0], "function")) && equalFold(args[1], "kill"):
		return true
	case len(args) == 2 && equalFold(args[0], "function") && equalFold(args[1], "stats"):
		return true
	}
	return isShutdownNoSave(args)
}

// isShutdownNoSave reports whether args are SHUTDOWN with NOSAVE.
func isShutdownNoSave(args [][]byte) bool {
	if !equalFold(args[0], "shutdown") {
		return false
	}
	for _, a := range args[1:] {
		if equalFold(a, "nosave") {
			return true
		}
	}
	return false
}
