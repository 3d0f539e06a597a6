package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// config is $HELM_HOME/config.toml.
type config struct {
	Identity string `toml:"identity"`
	Role     string `toml:"role"`
	Method   string `toml:"method"`
}

// config reads $HELM_HOME/config.toml; a missing file is an empty config.
func (a *app) config() (*config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	dir, err := a.homeDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config.toml")
	c := &config{}
	if _, err := toml.DecodeFile(path, c); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &usageError{Err: fmt.Errorf("read %s: %w", path, err), Hint: "fix the file; it holds identity, role and method, e.g. identity = \"john-agent\""}
	}
	c.Identity, c.Role, c.Method = strings.TrimSpace(c.Identity), strings.TrimSpace(c.Role), strings.TrimSpace(c.Method)
	a.cfg = c
	return c, nil
}

func (a *app) configPath() string {
	dir, err := a.homeDir()
	if err != nil {
		return "$HELM_HOME/config.toml"
	}
	return filepath.Join(dir, "config.toml")
}
