package govhost

// SetIdleModuleBytes sets g's budget of idle compiled modules (normally
// IdleModuleBytes), so that a test passes it with small modules.
func SetIdleModuleBytes(g *Gates, n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idleBudget = n
}
