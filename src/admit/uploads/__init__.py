"""Uploaded files: ``POST /api/v1/upload`` and the file fields that take its ``file:<uuid>`` ids.

A client uploads a file once (raw body, its ``Content-Type`` and a ``Content-Disposition``
naming the file) and puts the answered id into a file field (a layout's ``background``, an
item's ``picture``). The upload belongs to the credential that sent it and expires unless a
field takes it (:func:`admit.uploads.service.claim_upload`); used files are served at an
unguessable public URL (``/api/v1/media/<uuid>/<name>``) so that the fields read back as
absolute URLs.
"""
