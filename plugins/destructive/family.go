package destructive

// Families in report order: when a command matches several, the first wins.
const (
	famNone = iota
	famRm
	famGitPush
	famGitReset
	famGitClean
	famSQLDrop
	famSQLTruncate
	famMkfs
	famDD
	famBlock

	famFirst = famRm
	famLast  = famBlock
)

var familyCodes = [...]string{
	famNone:        ReasonAllowed,
	famRm:          ReasonRmRecursiveForce,
	famGitPush:     ReasonGitPushForce,
	famGitReset:    ReasonGitResetHard,
	famGitClean:    ReasonGitCleanForce,
	famSQLDrop:     ReasonSQLDrop,
	famSQLTruncate: ReasonSQLTruncate,
	famMkfs:        ReasonMkfs,
	famDD:          ReasonDD,
	famBlock:       ReasonBlockDeviceWrite,
}
