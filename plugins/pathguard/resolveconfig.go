package pathguard

import (
	"encoding/json"
	"fmt"
)

// ResolveConfig returns configJSON with its configured paths in their real
// form, the way both originals realpath their roots when a policy is
// built: every root (allowed_paths, root) and scope (paths) is replaced by
// resolve's answer after "~" expansion, and every absolute denied_paths
// entry is kept and, when it resolves elsewhere, followed by its resolved
// form. "$workspace" paths are left alone (the host resolves the task's
// workspace when the task opens).
//
// The gate has no filesystem, so the host calls this before configuring
// the gate (govhost.Gates does, for the built-in module), with resolve =
// pathfacts.Canonical. A root that is itself a symlink (/tmp on macOS, a
// home directory on another volume) then admits the paths beneath it.
// Errors are the configuration's own (*ConfigError) or resolve's.
func ResolveConfig(configJSON []byte, resolve func(string) (string, error)) ([]byte, error) {
	c, err := parseConfig(configJSON)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(configJSON, &fields); err != nil {
		return nil, cfgErr("", fmt.Errorf("%w: not a JSON object: %v", ErrType, err))
	}
	real := func(field, p string) (string, error) {
		if c.usesWorkspace && len(p) > 0 && p[0] == '$' {
			return p, nil
		}
		r, err := resolve(p)
		if err != nil {
			return "", fmt.Errorf("pathguard: config: %s: resolving %q: %w", field, p, err)
		}
		return r, nil
	}
	set := func(name string, v any) error {
		b, err := json.Marshal(v)
		fields[name] = b
		return err
	}
	switch c.kind {
	case KindVirtual:
		return configJSON, nil // a storage namespace, not the host's paths
	case KindWorkspace:
		r, err := real("root", c.scopes[0])
		if err != nil {
			return nil, err
		}
		if err := set("root", r); err != nil {
			return nil, err
		}
	case KindPathScope:
		scopes := make([]string, len(c.scopes))
		for i, s := range c.scopes {
			if scopes[i], err = real(fmt.Sprintf("paths[%d]", i), s); err != nil {
				return nil, err
			}
		}
		if err := set("paths", scopes); err != nil {
			return nil, err
		}
	default: // KindGuardPaths
		if len(c.roots) > 0 {
			roots := make([]string, len(c.roots))
			for i, s := range c.roots {
				if roots[i], err = real(fmt.Sprintf("allowed_paths[%d]", i), s); err != nil {
					return nil, err
				}
			}
			if err := set("allowed_paths", roots); err != nil {
				return nil, err
			}
		}
		if len(c.denied) > 0 {
			denied := make([]string, 0, len(c.denied))
			for i, d := range c.denied {
				denied = append(denied, d.text)
				if d.kind != deniedAbsolute {
					continue
				}
				r, err := real(fmt.Sprintf("denied_paths[%d]", i), d.abs)
				if err != nil {
					return nil, err
				}
				if r != d.abs {
					denied = append(denied, r)
				}
			}
			if err := set("denied_paths", denied); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(fields)
}
