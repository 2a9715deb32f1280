"""The organizer's back office under ``/control/``: pages on the same services and the same
permissions as the API (a signed-in user acts with the grants of their teams)."""
