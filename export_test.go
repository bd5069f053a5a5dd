package govhost

// SetIdleModuleBytes sets g's budget of idle compiled modules (normally
// IdleModuleBytes), so that a test passes it with small modules.
func SetIdleModuleBytes(g *Gates, n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idleBudget = n
}

// ResolvePathguardConfig is the host's step of a pathguard configuration
// (builtinconfig.go); readable is false for one it left to the module to
// refuse.
var ResolvePathguardConfig = resolvePathguardConfig

// WaitPrefetch waits for the loads Open started from the warm list
// (prefetch.go).
func WaitPrefetch(e *Engine) {
	if e.prefetch != nil {
		e.prefetch.wg.Wait()
	}
}
