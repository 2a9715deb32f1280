"""Admit: a multi-tenant event-ticketing server with a pretix-compatible REST API."""

__version__ = "0.1.0"
