"""Webhooks: organizer-configured receivers of notifications, signed deliveries as jobs."""
