"""The error of ticket drawing, apart from the drawing itself: the modules that plan and
fingerprint tickets run in every API process, which should not load the PDF libraries."""


class RenderError(Exception):
    """A ticket could not be drawn; the message names the layout and says why."""
