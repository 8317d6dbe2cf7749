package capability

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ExampleArgs returns the capability's example arguments (the spec's example:, in the
// registry as JSON) with every "$name" reference replaced by fixture[name]: the valid
// arguments the matrix tests call it with. A reference fixture does not define is an error
// naming the ones it does. A capability without an example has no arguments ({}).
func (c *Capability) ExampleArgs(fixture map[string]func() any) (map[string]any, error) {
	args := map[string]any{}
	if len(c.Example) > 0 {
		if err := json.Unmarshal(c.Example, &args); err != nil {
			return nil, fmt.Errorf("capability %s: example: %w", c.ID, err)
		}
	}
	v, err := resolveExample(args, fixture)
	if err != nil {
		return nil, fmt.Errorf("capability %s (%s): example: %w", c.ID, c.Source, err)
	}
	return v.(map[string]any), nil
}

func resolveExample(v any, fixture map[string]func() any) (any, error) {
	switch x := v.(type) {
	case string:
		name, ok := strings.CutPrefix(x, "$")
		if !ok {
			return x, nil
		}
		f, ok := fixture[name]
		if !ok {
			return nil, fmt.Errorf("unknown fixture value $%s (known: $%s)", name, strings.Join(slices.Sorted(maps.Keys(fixture)), ", $"))
		}
		return f(), nil
	case map[string]any:
		for k, m := range x {
			r, err := resolveExample(m, fixture)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
		return x, nil
	case []any:
		for i, m := range x {
			r, err := resolveExample(m, fixture)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
		return x, nil
	}
	return v, nil
}
