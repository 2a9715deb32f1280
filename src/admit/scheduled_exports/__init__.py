"""Scheduled exports: an exporter run on a recurrence rule, its file mailed to the owner
(``routes`` for the API, ``service`` for visibility and validation, ``schedule`` for the rule
and the next run, ``tasks`` for the scheduler and the job)."""
