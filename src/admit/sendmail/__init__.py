"""Scheduled e-mails (the ``sendmail`` plugin): rules per event, sent by a periodic task."""
