package bench

// Targets, in the order the rounds alternate them.
const (
	TargetFloor      = "floor"
	TargetFloorAudit = "floor+audit"
	TargetREST       = "rest"
	TargetMCP2026    = "mcp-2026-07-28"
	TargetMCP2025    = "mcp-2025-11-25"
)

// AllTargets is every target, floor first.
var AllTargets = []string{TargetFloor, TargetFloorAudit, TargetREST, TargetMCP2026, TargetMCP2025}

// Operations: the reads of issue 8, tools/list and the check-in tool.
const (
	OpCheckins    = "checkins/{date}"
	OpRosterChild = "roster/children/{id}"
	OpAttendance  = "attendance/summary"
	OpToolsList   = "tools/list"
	OpCheckin     = "checkin_register"
	// OpCheckinsTool is the busiest day's check-ins through the read tool
	// (tools/call neemias_checkins_by_date): MCP only, compared with REST's checkins/{date}.
	OpCheckinsTool = "checkins read tool"
)

// AllOps is every operation, in report order.
var AllOps = []string{OpCheckins, OpCheckinsTool, OpRosterChild, OpAttendance, OpToolsList, OpCheckin}

// ReadOps are the operations the cost-growth mode measures besides the check-in.
var ReadOps = []string{OpCheckins, OpRosterChild, OpAttendance}

// baselineOp is the op whose figures op is compared with: the read tool with REST's read of
// the same check-ins; every other op with its own.
func baselineOp(op string) string {
	if op == OpCheckinsTool {
		return OpCheckins
	}
	return op
}

// isMCP reports whether target speaks MCP (only those have tools/list and the read tool).
func isMCP(target string) bool { return target == TargetMCP2026 || target == TargetMCP2025 }

// hasOp reports whether target implements op.
func hasOp(target, op string) bool {
	return (op != OpToolsList && op != OpCheckinsTool) || isMCP(target)
}
