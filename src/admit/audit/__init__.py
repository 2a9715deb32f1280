"""The audit log of configuration changes (``audit_log``), written by an ORM flush listener in
the change's transaction: no API route or back-office form can forget it (``log.py``)."""
