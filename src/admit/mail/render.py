"""Mail texts from the Jinja2 templates in ``admit/mail/templates/``.

A mail ``NAME`` has three templates: ``NAME.subject.txt``, ``NAME.txt`` (the text part) and
``NAME.html`` (the HTML part, extending ``layout.html``). Text templates are plain text and
escape nothing; HTML templates escape every value, so a name someone typed into a form can
never add markup or links to a mail. A missing value is an error, not an empty gap in a mail.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

_loader = PackageLoader("admit.mail", "templates")
_text = Environment(
    loader=_loader, autoescape=False, undefined=StrictUndefined, keep_trailing_newline=True
)
_html = Environment(
    loader=_loader, autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
)


def render_mail(template_name: str, **context: Any) -> tuple[str, str, str]:
    """Returns (subject, text, html). The subject is one line: a value with line breaks
    cannot start new headers."""
    subject = " ".join(_text.get_template(f"{template_name}.subject.txt").render(context).split())
    text = _text.get_template(f"{template_name}.txt").render(context)
    html = _html.get_template(f"{template_name}.html").render(context, subject=subject)
    return subject, text, html
