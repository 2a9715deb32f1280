"""Data shredders: remove an event's personal data once the event is over, after an export.

The flow is the reference's: ``POST E/shredders/export/`` takes a ZIP of exactly the data the
chosen shredders will remove (a ``shred.export`` job), ``POST …/shred/{id1}/{id2}/`` removes it
once that file exists (a ``shred.run`` job), ``GET …/status/{id1}/{id2}/`` tells how that went
(kept about an hour). What tax law and the sales ledger need — codes, dates, products, prices,
taxes, totals, states, the fact and time of entries — is never touched.

Shredding records no webhook notification: no core action type means "personal data removed",
``modified`` would send one delivery per order of the event to receivers that could only fetch
empty fields; none of the reference's webhook types is for it either.
"""
