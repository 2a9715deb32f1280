"""Customer accounts, membership types and memberships of an organizer."""
