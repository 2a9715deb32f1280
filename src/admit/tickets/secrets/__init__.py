"""Ticket secrets a scanner can verify without the network (issue 29).

An event chooses how its tickets' secrets are made (``ticket_secret_generator``): ``random``
strings, which a scanner can only check against a downloaded list or the server, or
``pretix_sig1``, signed by the event's own Ed25519 key and carrying the product, variation,
date and validity window they were issued for, byte-compatible with the reference's scanner
apps. Secrets change when what they certify changes, the replaced ones go to the revocation
list; blocks go to the block list; scanners sync both lists (``routes.py``).
"""
