"""Identity and access: users, team API tokens, permissions (devices and OAuth plug in here)."""
