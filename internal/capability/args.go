package capability

import (
	"encoding/json"
	"strconv"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// ArgsFromStrings converts string-valued inputs (URI template variables on MCP, path and query
// parameters on REST) to the JSON arguments object by each input's declared type, so both
// transports hand the one validator the same object. A value that is not of its declared scalar
// type is an *errs.Invalid naming the input (never the value); formats are the validator's.
func (c *Capability) ArgsFromStrings(vars map[string]string) (json.RawMessage, error) {
	obj := make(map[string]any, len(vars))
	for name, raw := range vars {
		v, _ := c.Input(name)
		switch v.Type {
		case "integer":
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return nil, &errs.Invalid{Field: name, Reason: "must be an integer"}
			}
			obj[name] = n
		case "number":
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return nil, &errs.Invalid{Field: name, Reason: "must be a number"}
			}
			obj[name] = f
		case "boolean":
			if raw != "true" && raw != "false" {
				return nil, &errs.Invalid{Field: name, Reason: "must be true or false"}
			}
			obj[name] = raw == "true"
		default:
			obj[name] = raw
		}
	}
	return json.Marshal(obj)
}
