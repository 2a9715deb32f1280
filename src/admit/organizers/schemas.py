from __future__ import annotations

from admit.kit.resources.schema import ReadModel


class OrganizerOut(ReadModel):
    name: str
    slug: str
    public_url: str
    plugins: list[str]
