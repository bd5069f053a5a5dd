package evidence

// Test-only access to MemStore's tamper hooks for the external test package.
var (
	TamperMem = (*MemStore).tamper
	RemoveMem = (*MemStore).remove
)
