"""All SQLAlchemy models, imported here so metadata is complete wherever models are used."""

from admit.models.events import Event
from admit.models.mail import OutgoingMail
from admit.models.organizers import Organizer
from admit.models.teams import Team, TeamAPIToken, TeamInvite, team_limit_events, team_members
from admit.models.users import User

__all__ = [
    "Event",
    "Organizer",
    "OutgoingMail",
    "Team",
    "TeamAPIToken",
    "TeamInvite",
    "User",
    "team_limit_events",
    "team_members",
]
