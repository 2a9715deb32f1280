"""User accounts: passwords, second factors, login throttling, password reset, invitations."""
